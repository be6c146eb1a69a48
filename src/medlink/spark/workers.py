"""What runs inside Spark's Python workers: one linker per worker process, and pandas batches linked with it.

Spark reuses its Python workers across tasks (``spark.python.worker.reuse``, on by default), so a linker kept here
is loaded once per worker, not once per task, batch or row. Process-wide state has one pattern in medlink, a
memoized loader (this one; the trial normalizer's is ``normalizer_spec.normalizer_in_process``), because a worker
process has no other object that outlives a task.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import pandas as pd

from medlink.linking import Linker, LinkerConfig
from medlink.linking.annotation.annotator import AnnotatorConfig, with_span_sources
from medlink.linking.annotation.corpus_lexicon import CorpusLexicon, packaged_corpus_lexicon
from medlink.linking.spec import LinkerSpec


@functools.cache
def worker_linker(spec: LinkerSpec, config: LinkerConfig | None) -> Linker:
    return Linker.load(spec, config=config)


@functools.cache
def worker_corpus_lexicon() -> CorpusLexicon | None:
    """The worker's packaged corpus lexicon, read once: what it teaches a terminology is remembered with it, so a
    task does not make it again (nor does the driver ship it with every task)."""
    return packaged_corpus_lexicon()


def link_frame(frame: pd.DataFrame, column: str, linker: Linker, prefix: str) -> pd.DataFrame:
    """``frame`` with the link columns (named ``prefix`` + name) of its ``column``; a null mention links as ''."""
    mentions = ["" if value is None or value != value else str(value) for value in frame[column]]  # NaN != NaN
    results = linker.link_many(mentions)
    linked = frame.copy()
    linked[prefix + "concept_id"] = [result.concept_id for result in results]
    linked[prefix + "concepts"] = [list(result.concepts) for result in results]
    linked[prefix + "preferred_name"] = [
        result.preferred_names[0] if result.preferred_names else None for result in results
    ]
    linked[prefix + "score"] = [result.score for result in results]
    linked[prefix + "stage"] = [result.stage.value for result in results]
    linked[prefix + "matched_name"] = [result.matched_name for result in results]
    return linked


def link_batches(
    batches: Iterator[pd.DataFrame], spec: LinkerSpec, config: LinkerConfig | None, column: str, prefix: str
) -> Iterator[pd.DataFrame]:
    """The ``mapInPandas`` function of :func:`medlink.spark.link_column`."""
    linker = worker_linker(spec, config)
    for frame in batches:
        yield link_frame(frame, column, linker, prefix)


def annotate_batches(
    batches: Iterator[pd.DataFrame],
    spec: LinkerSpec,
    settings: LinkerConfig | None,
    config: AnnotatorConfig,
    column: str,
    output: str,
    entity_type: str | None = None,
) -> Iterator[pd.DataFrame]:
    """The ``mapInPandas`` function of :func:`medlink.spark.annotate_column`: each text's annotations as a list of
    records (an ``array<struct>`` column); a null text has none. With ``config.corpus_lexicon`` on, the worker's
    corpus lexicon is used, for ``entity_type``."""
    linker = worker_linker(spec, settings)
    if config.corpus_lexicon:
        config = with_span_sources(config, config.tagger, worker_corpus_lexicon(), entity_type)
    for frame in batches:
        texts = ["" if value is None or value != value else str(value) for value in frame[column]]
        annotated = frame.copy()
        annotated[output] = [[a.to_dict() for a in found] for found in linker.annotate_many(texts, config)]
        yield annotated
