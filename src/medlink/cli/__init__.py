"""The ``medlink`` command. Subcommands import their heavy dependencies inside their bodies, so ``--help`` is
instant. Errors medlink understands are printed as one line without a traceback."""

from __future__ import annotations

import click

from medlink.cli.aliases import hidden_alias
from medlink.cli.benchmark_command import benchmark
from medlink.cli.calibrate_command import calibrate
from medlink.cli.distill_command import distill
from medlink.cli.eval_command import eval_command
from medlink.cli.index_commands import index
from medlink.cli.link_command import link
from medlink.cli.mcsm_command import mcsm
from medlink.cli.serve_command import serve
from medlink.cli.terminology_commands import terminology
from medlink.cli.train_candidate_reranker_command import train_candidate_reranker
from medlink.cli.train_command import train
from medlink.cli.train_set_ranker_command import train_set_ranker
from medlink.cli.trials_commands import trials
from medlink.errors import MedlinkError
from medlink.version import __version__


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except MedlinkError as error:
            raise click.ClickException(str(error)) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="medlink")
def main() -> None:
    """Link free-text medical terms to terminology concepts (MeSH, MEDIC, HPO, ICD, UMLS, …)."""


main.add_command(link)
main.add_command(terminology)
main.add_command(eval_command)
main.add_command(index)
main.add_command(calibrate)
main.add_command(mcsm)
main.add_command(train)
# The three learned rankers, named so their commands tell them apart; the old names stay as hidden aliases.
main.add_command(train_set_ranker)  # mentions naming several concepts (CHIP-CDN)
main.add_command(train_candidate_reranker)  # a linker's close candidates reordered (KAR)
main.add_command(hidden_alias(train_set_ranker, "train-ranker"))
main.add_command(hidden_alias(train_candidate_reranker, "train-reranker"))
main.add_command(distill)
main.add_command(benchmark)
main.add_command(trials)
main.add_command(serve)
