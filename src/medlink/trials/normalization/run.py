"""``medlink trials normalize`` as a function: records streamed from sources, batches normalized in this process
or in ``workers`` processes (each building its own linkers from a :class:`NormalizerSpec`), rows written in input
order through a :class:`ResumableWriter`, so a killed run resumes where it stopped."""

from __future__ import annotations

import collections
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from medlink.terminology import ReadReport
from medlink.trials.normalization.normalizer import NormalizedTrial, TrialNormalizer, record_batches
from medlink.trials.normalization.normalizer_spec import NormalizerSpec, normalizer_in_process
from medlink.trials.normalization.output import ResumableWriter
from medlink.trials.readers import read_trials
from medlink.trials.records import TrialRecord


@dataclass(frozen=True)
class RunSummary:
    """seconds: from the linkers being ready (built, or warmed for the workers) to the last row written, so that a
    rate read from it is the run's and not the first run's compilation of a default index."""

    read: int
    skipped_done: int
    written: int
    report: ReadReport
    seconds: float


def normalize_to_file(sources: Sequence[Path], output: Path, spec: NormalizerSpec, workers: int = 1,
                      report: ReadReport | None = None, progress: bool = False) -> RunSummary:  # fmt: skip
    """Normalize every record of ``sources`` into ``output`` (``.jsonl`` or ``.parquet``), resuming a killed run."""
    report = report or ReadReport()
    counts = {"read": 0, "skipped": 0}
    with ResumableWriter(output) as writer:

        def pending() -> Iterator[TrialRecord]:
            for record in read_trials(sources, report):
                counts["read"] += 1
                if record.nct_id in writer.done:
                    counts["skipped"] += 1
                    continue
                yield record

        batches = record_batches(pending(), spec.batch_records)
        normalizer = spec.build(progress) if workers <= 1 else None
        if normalizer is None:
            for recipe in spec.recipes:
                recipe.warm(progress)  # built here, with the progress bar, rather than by a worker while others wait
        started = time.perf_counter()
        bar = _bar(progress)
        written = 0
        normalized = _normalized(batches, normalizer) if normalizer else _normalized_by_workers(batches, spec, workers)
        for trials in normalized:
            written += writer.write(trials)
            bar.update(len(trials))
        bar.close()
        writer.finish()
    return RunSummary(counts["read"], counts["skipped"], written, report, time.perf_counter() - started)


def _normalized(batches: Iterator[list[TrialRecord]], normalizer: TrialNormalizer) -> Iterator[list[NormalizedTrial]]:
    for batch in batches:
        yield normalizer.normalize_batch(batch)


def _normalized_by_workers(batches: Iterator[list[TrialRecord]], spec: NormalizerSpec,
                           workers: int) -> Iterator[list[NormalizedTrial]]:  # fmt: skip
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # ONNX Runtime and torch threads do not survive a fork
    ahead = 2 * workers  # batches read ahead of the writer: Pool.imap would read the whole input ahead
    with context.Pool(workers, initializer=_one_thread_each) as pool:
        pending: collections.deque = collections.deque()
        for batch in batches:
            pending.append(pool.apply_async(_normalize_in_worker, (spec, batch)))
            if len(pending) >= ahead:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _one_thread_each() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # the workers share the cores


def _normalize_in_worker(spec: NormalizerSpec, batch: list[TrialRecord]) -> list[NormalizedTrial]:
    return normalizer_in_process(spec).normalize_batch(batch)


def _bar(progress: bool):
    from tqdm import tqdm

    return tqdm(desc="normalizing records", unit=" records", disable=not progress)
