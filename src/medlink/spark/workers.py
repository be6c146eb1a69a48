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
from medlink.linking.annotation.annotator import AnnotatorConfig
from medlink.linking.spec import LinkerSpec


@functools.cache
def worker_linker(spec: LinkerSpec, config: LinkerConfig | None) -> Linker:
    return Linker.load(spec, config=config)


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
) -> Iterator[pd.DataFrame]:
    """The ``mapInPandas`` function of :func:`medlink.spark.annotate_column`: each text's annotations as a list of
    records (an ``array<struct>`` column); a null text has none."""
    linker = worker_linker(spec, settings)
    for frame in batches:
        texts = ["" if value is None or value != value else str(value) for value in frame[column]]
        annotated = frame.copy()
        annotated[output] = [[a.to_dict() for a in found] for found in linker.annotate_many(texts, config)]
        yield annotated
