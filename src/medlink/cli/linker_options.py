"""Options shared by the commands that link (``link``, ``eval``) and the linker they describe.

``@linker_options`` adds the options and hands the command one :class:`LinkerChoice` argument, ``linker_choice``,
so every command that links reads them the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from medlink.cli.dataclass_options import with_settings
from medlink.errors import MedlinkError
from medlink.linking import Linker, LinkerConfig
from medlink.linking.mentions.branches import parse_branches
from medlink.linking.pipeline import DEFAULT_SIEVES
from medlink.options import setting

if TYPE_CHECKING:
    from medlink.evaluation.corpus import Corpus


@dataclass(frozen=True)
class LinkerChoice:
    """What the shared options say about the linker to build; each field is its option."""

    terminology_dir: Path | None = setting(
        None, "Compiled terminology (default: the embedded MeSH, or the index's own).", flag="--terminology"
    )
    index_dir: Path | None = setting(
        None, "Vector index from `medlink index build` (default: the embedded one, built on first use).", flag="--index"
    )
    sieves: str | None = setting(None, f"Sieve order, e.g. '{DEFAULT_SIEVES}' (the default) or 'exact,O-T'.")
    exact_only: bool = setting(False, "Exact normalized match only: no encoder, no index.")
    nil_threshold: float | None = setting(
        None, "Dense decisions scoring below this are nil (default: the index's calibrated one, if any)."
    )
    several_within: float | None = setting(
        None, "Claim every concept scoring within this margin of the best (multi-concept mentions)."
    )
    abbreviations: bool = setting(True, "Expand short forms defined in a mention's document before linking.")
    shorthand: bool = setting(
        True,
        "Also search a mention with its clinical shorthand spelled out ('T2DM', 'HTN', 'breast ca'; medlink's "
        "lexicon) and keep that when it links better.",
    )
    shorthand_file: Path | None = setting(
        None,
        "Your own shorthand, 'short<TAB>long' per line (resources/clinical-shorthand/shorthand.tsv shows the "
        "format); joins and overrides medlink's.",
        path={"exists": True, "dir_okay": False},
    )
    respell: bool = setting(
        True,
        "Also search a mention spelled the American way ('oedema' → 'edema', 'sulphate' → 'sulfate'); and, "
        "when that is a name, a salt as its parent drug ('metformin hydrochloride'), a labelled compound without "
        "its label ('[3H]-L-arginine'), a possessive eponym as its disease ('Parkinson's').",
    )
    composites: bool = setting(True, "Link composite mentions ('breast and ovarian cancer') part by part.")
    count_head: bool = setting(
        True,
        "Let an encoder trained with a concept-count head decide how many concepts a mention claims (no "
        "effect on encoders without one).",
    )
    number_agreement: bool = setting(
        True,
        "A retrieved name stating another number than the mention ('SCA11' for 'SCA1') gives way to a close "
        "candidate stating the same numbers.",
    )
    number_margin: float | None = setting(
        None,
        f"How close (in cosine) that candidate must score to the best (default {LinkerConfig.number_margin}).",
        minimum=0,
    )
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
    rerank: bool = setting(
        True, "Use the linker's reranker (the given --reranker, or the one shipped with the default)."
    )
    branches: str | None = setting(
        None,
        "Link only to concepts under these tree-number prefixes (MeSH: C diseases, F03 mental disorders, D "
        "chemicals and drugs); needs a terminology with tree numbers.",
        metavar="C,F03",
    )
    form_test: bool = setting(
        True,
        "Let the linker's form test (the embedded default's, or an index's calibrated one) make a retrieved "
        "look-alike nil: the mention has a word no name of the terminology has that the found name does not account "
        "for, or a drug-name stem that differs ('quextatinib' → Lapatinib).",
    )
    max_mention_chars: int = setting(
        LinkerConfig.max_mention_chars,
        "A longer mention is nil, with the reason, before any work is spent on it (0: no limit).",
        minimum=0,
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
    )


def linker_options(function: Callable) -> Callable:
    """The shared linker options, handed to ``function`` as one :class:`LinkerChoice`, ``linker_choice``."""
    return with_settings(LinkerChoice, "linker_choice")(function)


def make_linker(
    choice: LinkerChoice, progress: bool = True, training: Corpus | None = None, branches: tuple[str, ...] = ()
) -> Linker:
    """The linker the options describe; explicit settings override what an index was calibrated with.
    ``branches`` apply when ``--branches`` is not given (``medlink link --entity-type``).

    The mentions of ``training`` join the search as source D: the exact sieve matches them, and the dense sieves
    search an index that holds them (a cached copy with only the mentions encoded)."""
    if choice.ranker_dir is not None and training is not None and training.labelled_pairs():
        raise click.UsageError("a ranker remembers the training mentions it was fitted on: drop --train")
    if choice.shorthand and choice.shorthand_file is not None:
        from medlink.linking.mentions.shorthand import shorthand_lexicon

        shorthand_lexicon(choice.shorthand_file)  # a malformed file is refused before anything is linked
    linker = _base_linker(choice, progress, training)
    return linker.with_config(config_from_choice(choice, linker.config, branches))


def config_from_choice(
    choice: LinkerChoice, config: LinkerConfig | None = None, branches: tuple[str, ...] = ()
) -> LinkerConfig:
    """``config`` (default: the default settings) with what the options say; options left alone keep it."""
    config = config or LinkerConfig()
    return replace(
        config,
        nil_threshold=choice.nil_threshold if choice.nil_threshold is not None else config.nil_threshold,
        several_within=choice.several_within if choice.several_within is not None else config.several_within,
        expand_abbreviations=choice.abbreviations,
        shorthand=choice.shorthand,
        shorthand_file=choice.shorthand_file,
        respell=choice.respell,
        split_composites=choice.composites and choice.ranker_dir is None,  # a ranker claims sets itself
        count_head=choice.count_head,
        number_margin=_number_margin(choice, config.number_margin),
        rerank=choice.rerank,
        branches=parse_branches(choice.branches) if choice.branches else branches,
        max_mention_chars=choice.max_mention_chars,
        form_test=choice.form_test,
    )


def _number_margin(choice: LinkerChoice, configured: float | None) -> float | None:
    if not choice.number_agreement:
        return None
    return choice.number_margin if choice.number_margin is not None else configured


def _base_linker(choice: LinkerChoice, progress: bool, training: Corpus | None) -> Linker:
    from medlink.linking.spec import TrainingMentions, linker_spec

    mentions = None
    if training is not None and training.labelled_pairs():
        mentions = TrainingMentions.of(training.labelled_pairs(), training.several_pairs())
    try:  # the spec checks that the options go together
        spec = linker_spec(
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
    return Linker.load(spec, progress=progress)
