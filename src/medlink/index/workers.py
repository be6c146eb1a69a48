"""Encoding a build's chunks in worker processes on one machine (``medlink index build --workers N``), as Spark's
executors do on many (``medlink.spark.index_build``): each worker reloads the build's encoder with one thread and
writes whole chunk files into the build's work folder, which the build then assembles and a killed build resumes
from. On 2 cores one process whose ONNX session uses both is as fast (docs/performance.md, "Worker processes"), so
one process stays the default; workers are for machines where one session's threads stop scaling."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any

from medlink.encoders.base import Encoder
from medlink.index.chunks import chunk_path, encode_chunk
from medlink.processes import WorkerProcesses


def encode_in_workers(
    texts: Sequence[str], workdir: Path, chunk_size: int, load: dict[str, Any], workers: int, progress: bool = False
) -> int:
    """Encode the chunks of ``texts`` that ``workdir`` lacks in ``workers`` processes, each loading its encoder with
    ``load_encoder(**load, threads=1)``; returns how many chunks were encoded."""
    from tqdm import tqdm

    starts = list(range(0, len(texts), chunk_size))
    missing = [number for number, _ in enumerate(starts) if not chunk_path(workdir, number).exists()]
    if not missing:
        return 0
    # medlink's own workers: no forked copy of the parent's ONNX sessions and threads, no re-import of its script
    with (
        WorkerProcesses(min(workers, len(missing))) as pool,
        tqdm(
            total=len(missing), desc=f"encoding chunks ({workers} workers)", unit=" chunks", disable=not progress
        ) as bar,
    ):
        futures = [
            pool.submit(
                _encode, tuple(texts[starts[n] : starts[n] + chunk_size]), str(workdir), n, tuple(sorted(load.items()))
            )
            for n in missing
        ]
        for future in as_completed(futures):
            future.result()  # a worker's error stops the build here; the chunks written so far are kept
            bar.update(1)
    return len(missing)


def _encode(texts: tuple[str, ...], workdir: str, number: int, load: tuple[tuple[str, Any], ...]) -> None:
    encode_chunk(_worker_encoder(load), texts, Path(workdir), number)


@functools.cache
def _worker_encoder(load: tuple[tuple[str, Any], ...]) -> Encoder:
    """One encoder per worker process, kept for the chunks it encodes next."""
    from medlink.encoders import load_encoder

    return load_encoder(**dict(load), threads=1)
