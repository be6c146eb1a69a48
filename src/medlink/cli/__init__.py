"""The ``medlink`` command. Each subcommand's module is imported only when that subcommand runs (``--help`` imports
them all to list them), and subcommands import their heavy dependencies inside their bodies, so a one-shot
``medlink link`` loads what linking needs and no more. Errors medlink understands are printed as one line without a
traceback."""

from __future__ import annotations

import importlib

import click

from medlink.cli.aliases import hidden_alias
from medlink.errors import MedlinkError
from medlink.version import __version__

# Each command: where it lives. Every trainer is a subcommand of `train` (cli/train_group.py).
COMMANDS = {
    "link": "medlink.cli.link_command:link",
    "annotate": "medlink.cli.annotate_command:annotate",
    "terminology": "medlink.cli.terminology_commands:terminology",
    "eval": "medlink.cli.eval_command:eval_command",
    "index": "medlink.cli.index_commands:index",
    "calibrate": "medlink.cli.calibrate_command:calibrate",
    "mcsm": "medlink.cli.mcsm_command:mcsm",
    "train": "medlink.cli.train_group:train",
    "distill": "medlink.cli.distill_command:distill",
    "benchmark": "medlink.cli.benchmark_command:benchmark",
    "trials": "medlink.cli.trials_commands:trials",
    "serve": "medlink.cli.serve_command:serve",
    "models": "medlink.cli.models_commands:models",
}
# Old names, hidden but still answering for a release: each is a trainer of `train` now.
OLD_NAMES = {
    "train-set-ranker": "set-ranker",
    "train-pair-rescorer": "pair-rescorer",
    "train-candidate-reranker": "candidate-reranker",
    "train-tagger": "tagger",
    "train-ranker": "set-ranker",
    "train-reranker": "candidate-reranker",
}


class _Group(click.Group):
    """Commands imported on first use; a :class:`MedlinkError` becomes click's one-line error."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in OLD_NAMES:
            trainers = self.get_command(ctx, "train")
            assert isinstance(trainers, click.Group)
            renamed = trainers.get_command(ctx, OLD_NAMES[name])
            return hidden_alias(renamed, name) if renamed is not None else None
        if name not in COMMANDS:
            return None
        module, _, attribute = COMMANDS[name].partition(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except MedlinkError as error:
            raise click.ClickException(str(error)) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="medlink")
def main() -> None:
    """Link free-text medical terms to terminology concepts (MeSH, MEDIC, HPO, ICD, UMLS, …)."""
