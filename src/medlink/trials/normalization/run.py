"""``medlink trials normalize`` as a function: records streamed from sources, batches normalized in this process
or in ``workers`` processes (each building its own linkers from a :class:`NormalizerSpec`), rows written in input
order through a :class:`ResumableWriter`, so a killed run resumes where it stopped."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from medlink.processes import WorkerProcesses
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


def normalize_to_file(
    sources: Sequence[Path],
    output: Path,
    spec: NormalizerSpec,
    workers: int = 1,
    report: ReadReport | None = None,
    progress: bool = False,
) -> RunSummary:
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
            for linker_spec in spec.linker_specs:
                linker_spec.warm(
                    progress
                )  # built here, with the progress bar, rather than by a worker while others wait
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


def _normalized_by_workers(
    batches: Iterator[list[TrialRecord]], spec: NormalizerSpec, workers: int
) -> Iterator[list[NormalizedTrial]]:
    # medlink's own workers (ONNX Runtime and torch threads do not survive a fork; the caller's script is never
    # imported again), one thread each as they share the cores; a few batches read ahead of the writer
    with WorkerProcesses(workers, env={"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}) as pool:
        yield from pool.map(_normalize_in_worker, itertools.repeat(spec), batches)


def _normalize_in_worker(spec: NormalizerSpec, batch: list[TrialRecord]) -> list[NormalizedTrial]:
    return normalizer_in_process(spec).normalize_batch(batch)


def _bar(progress: bool):
    from tqdm import tqdm

    return tqdm(desc="normalizing records", unit=" records", disable=not progress)
