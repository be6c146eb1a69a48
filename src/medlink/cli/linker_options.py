"""Options shared by the commands that link (``link``, ``eval``, ``annotate``, ``serve``) and the linker they
describe.

``@linker_options`` adds two kinds of option and hands the command one :class:`LinkerChoice`, ``linker_choice``:
which linker to build (the fields of :class:`LinkerChoice`, the options of :func:`~medlink.linking.spec.linker_spec`)
and how it links (one option per field of :class:`~medlink.linking.LinkerConfig`, made from its declarations; the
research ones are hidden from ``--help`` and also read from ``--config FILE.toml``).
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from medlink.cli.dataclass_options import dataclass_options, given_settings, settings_from
from medlink.errors import MedlinkError, shown
from medlink.linking import Linker, LinkerConfig
from medlink.linking.mentions.branches import branch_prefixes
from medlink.linking.pipeline import DEFAULT_SIEVES
from medlink.options import setting, settings_of, settings_toml

if TYPE_CHECKING:
    from medlink.evaluation.corpus import Corpus
    from medlink.linking.annotation.annotator import AnnotatorConfig

SETTINGS_TABLE = "linker"  # the table of a --config file that holds LinkerConfig's settings
ANNOTATOR_TABLE = "annotator"  # and the one that holds AnnotatorConfig's, read by the commands that annotate
MAX_CONFIG_BYTES = 1_000_000  # a settings file is a page of text


@dataclass(frozen=True)
class LinkerChoice:
    """What the shared options say about the linker to build; each declared field is its option. ``given``: the
    settings given on the command line, which win over the ``--config`` file and the index's calibration."""

    terminology_dir: Path | None = setting(
        None, "Compiled terminology (default: the embedded MeSH, or the index's own).", flag="--terminology"
    )
    index_dir: Path | None = setting(
        None, "Vector index from `medlink index build` (default: the embedded one, built on first use).", flag="--index"
    )
    sieves: str | None = setting(None, f"Sieve order, e.g. '{DEFAULT_SIEVES}' (the default) or 'exact,O-T'.")
    exact_only: bool = setting(False, "Exact normalized match only: no encoder, no index.")
    ranker_dir: Path | None = setting(
        None,
        "Link with a set ranker from `medlink train set-ranker` (mentions naming several concepts, e.g. "
        "CHIP-CDN); give its --terminology.",
        flag="--ranker",
        path={"exists": True, "file_okay": False},
    )
    reranker_dir: Path | None = setting(
        None,
        "Rerank close retrieval decisions with a cross-encoder from `medlink train candidate-reranker` trained "
        "for this index.",
        flag="--reranker",
        path={"exists": True, "file_okay": False},
    )
    embedded: str = setting(
        "mesh",
        "Which embedded default links when no --index or --terminology is given: all of MeSH (descriptors, "
        "and supplementary records of drugs, chemicals and rare diseases by exact match; a descriptor first where "
        "both share a name) or the descriptors alone.",
        choices=("mesh", "descriptors"),
    )
    ef_search: int | None = setting(
        None,
        "HNSW search beam: higher finds the true nearest names more often, lower is faster (default: what "
        "the index was built with; no effect on exact indexes).",
        minimum=1,
        research=True,
    )
    config_file: Path | None = setting(
        None,
        f"A TOML file whose [{SETTINGS_TABLE}] table sets the linker's settings, research ones included (field "
        f"names of LinkerConfig), and [{ANNOTATOR_TABLE}] the annotator's; --print-config writes every one with its "
        "default. Options given here win.",
        flag="--config",
        path={"exists": True, "dir_okay": False},
    )
    given: Mapping[str, Any] = field(default_factory=dict)

    def settings(self) -> LinkerConfig:
        """The default settings with the ``--config`` file's, then the given ones."""
        return self.layered(LinkerConfig, SETTINGS_TABLE, LinkerConfig(), self.given)

    def layered(self, settings: type, table: str, base: Any, given: Mapping[str, Any]) -> Any:
        """``base`` with the ``--config`` file's ``table``, then with ``given`` (what the command line says)."""
        if self.config_file is not None:
            values = _settings_table(self.config_file, table)
            base = settings_of(settings, values, where=str(self.config_file), base=base, folder=self.config_file.parent)
        return replace(base, **given)


def linker_options(function: Callable | None = None, *, skip: tuple[str, ...] = ()) -> Callable:
    """The shared linker options, handed to ``function`` as one :class:`LinkerChoice`, ``linker_choice``;
    ``skip``: settings the command offers otherwise (the service's own ``--max-document-chars``)."""

    def decorate(function: Callable) -> Callable:
        @functools.wraps(function)
        def with_choice(**values: Any) -> Any:
            given = given_settings(LinkerConfig, values, skip)
            if values.pop("number_agreement") is False:  # the old spelling of --number-margin none
                given["number_margin"] = None
            choice = replace(settings_from(LinkerChoice, values), given=given)
            return function(linker_choice=choice, **values)

        options = dataclass_options(LinkerChoice)(dataclass_options(LinkerConfig, skip)(with_choice))
        options = click.option("--number-agreement/--no-number-agreement", default=True, hidden=True)(options)
        return click.option(
            "--print-config",
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_print_config,
            help=f"Print every linker setting with its default, as a --config file's [{SETTINGS_TABLE}] table; exit.",
        )(options)

    return decorate(function) if function is not None else decorate


def make_linker(
    choice: LinkerChoice, progress: bool = True, training: Corpus | None = None, branches: tuple[str, ...] = ()
) -> Linker:
    """The linker the options describe; settings given on the command line or in ``--config`` override what an
    index was calibrated with. ``branches`` (``medlink link --entity-type``, the old name of ``--branches KIND``)
    count as given on the command line, unless ``--branches`` is.

    The mentions of ``training`` join the search as source D: the exact sieve matches them, and the dense sieves
    search an index that holds them (a cached copy with only the mentions encoded)."""
    if choice.ranker_dir is not None and training is not None and training.labelled_pairs():
        raise click.UsageError("a ranker remembers the training mentions it was fitted on: drop --train")
    if branches and "branches" not in choice.given:  # what --entity-type says, unless --branches says otherwise
        choice = replace(choice, given={**choice.given, "branches": branches})
    try:
        config = choice.settings()
    except MedlinkError as error:
        raise click.BadParameter(str(error), param_hint="--config") from None
    try:
        branch_prefixes(config.branches)  # an unknown kind is refused before anything is written
    except MedlinkError as error:
        where = "--branches" if "branches" in choice.given else f"--config {choice.config_file}"
        raise click.BadParameter(str(error), param_hint=where) from None
    if config.shorthand and config.shorthand_file is not None:
        from medlink.linking.mentions.shorthand import shorthand_lexicon

        shorthand_lexicon(config.shorthand_file)  # a malformed file is refused before anything is linked
    return Linker.load(_spec(choice, training), config=config, progress=progress)


def annotator_config(choice: LinkerChoice, values: dict[str, Any]) -> AnnotatorConfig:
    """The annotator's settings: the defaults, then the ``--config`` file's [annotator] table, then the options of
    ``AnnotatorConfig`` given on the command line (``values``, the command's keywords for them)."""
    from medlink.linking.annotation.annotator import AnnotatorConfig

    given = given_settings(AnnotatorConfig, values)
    try:
        return choice.layered(AnnotatorConfig, ANNOTATOR_TABLE, AnnotatorConfig(), given)
    except MedlinkError as error:
        raise click.BadParameter(str(error), param_hint="--config") from None


def _spec(choice: LinkerChoice, training: Corpus | None) -> Any:
    from medlink.linking.spec import TrainingMentions, linker_spec

    mentions = None
    if training is not None and training.labelled_pairs():
        mentions = TrainingMentions.of(training.labelled_pairs(), training.several_pairs())
    try:  # the spec checks that the options go together
        return linker_spec(
            choice.index_dir,
            terminology=choice.terminology_dir,
            exact_only=choice.exact_only,
            sieves=choice.sieves,
            ef_search=choice.ef_search,
            ranker=choice.ranker_dir,
            reranker=choice.reranker_dir,
            embedded=choice.embedded,
            mentions=mentions,
        )
    except MedlinkError as error:
        raise click.UsageError(str(error)) from None


def _settings_table(path: Path, table: str) -> Any:
    if not path.is_file():  # a FIFO would hang the read, a device never end it
        raise MedlinkError(f"{path}: not a regular file")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise MedlinkError(f"{path}: over {MAX_CONFIG_BYTES:,} bytes, too large for a settings file")
        document = tomllib.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as error:  # ValueError: not UTF-8, not TOML, an integer of thousands of digits
        raise MedlinkError(f"{path}: not a readable TOML file: {error}") from None
    unknown = sorted(set(document) - {SETTINGS_TABLE, ANNOTATOR_TABLE})
    if unknown:
        raise MedlinkError(
            f"{path}: unknown table or key {shown(unknown[0])}; settings go under [{SETTINGS_TABLE}] and "
            f"[{ANNOTATOR_TABLE}]"
        )
    return document.get(table, {})


def _print_config(context: click.Context, parameter: click.Parameter, value: bool) -> None:
    if value and not context.resilient_parsing:
        click.echo(settings_toml(LinkerConfig, SETTINGS_TABLE), nl=False)
        if any(option.name in ("context", "end_to_end") for option in context.command.params):  # it annotates
            from medlink.linking.annotation.annotator import AnnotatorConfig

            click.echo("\n" + settings_toml(AnnotatorConfig, ANNOTATOR_TABLE), nl=False)
        context.exit()
