"""Where ``medlink annotate`` and ``medlink eval --end-to-end`` find their spans besides the terminology's names:
the span tagger and approximate (trigram) names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from medlink.linking.annotation.annotator import AnnotatorConfig
    from medlink.terminology import Terminology


def span_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option(
        "--approximate",
        type=click.FloatRange(0.5, 1.0),
        default=None,
        metavar="SIMILARITY",
        help="Also spans that resemble a name (character-trigram Jaccard ≥ SIMILARITY, QuickUMLS-style, e.g. 0.8) "
        "among the words nothing else found; linked as that name. Off by default (slower).",
    )(command)
    return click.option(
        "--tagger",
        default="auto",
        show_default=True,
        metavar="auto|none|FOLDER",
        help="Span tagger whose spans join the dictionary's: auto = the packaged one when medlink[tagger] is "
        "installed and no --train documents are given; none; or a folder from `medlink train tagger`.",
    )(command)


def span_config(
    config: AnnotatorConfig,
    terminology: Terminology,
    tagger: str,
    approximate: float | None,
    entity_type: str | None,
    trained: bool = False,
) -> AnnotatorConfig:
    """``trained``: training documents were given (``--train``). Then ``--tagger auto`` means none: what those
    documents teach (the lexicon) was measured better alone (BC5CDR Disease dev document F1 0.837, with the
    packaged tagger beside it 0.807)."""
    from medlink.linking.annotation.annotator import packaged_span_sources
    from medlink.linking.annotation.approximate import ApproximateNames

    near = ApproximateNames(terminology.normalized_names(), approximate) if approximate is not None else None
    chosen = "none" if trained and tagger == "auto" else tagger
    return packaged_span_sources(replace(config, approximate=near), chosen, entity_type)
