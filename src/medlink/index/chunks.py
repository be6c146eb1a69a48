"""A build's encoded chunks: fp16 files in its work folder, each written whole, so that a killed build (local, in
worker processes or on Spark executors) resumes from the chunks it has."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from medlink.encoders.base import Encoder


def chunk_path(workdir: Path, number: int) -> Path:
    return workdir / "chunks" / f"{number:05d}.npy"


def encode_chunk(encoder: Encoder, texts: Sequence[str], workdir: Path, number: int) -> None:
    """Encode one chunk into its fp16 file, written beside it and renamed: a file there is always whole (worker
    processes encode chunks of the same build with this; Spark executors write theirs through a shard store)."""
    path = chunk_path(workdir, number)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial.npy")
    np.save(partial, encoder.encode(texts).astype(np.float16))
    os.replace(partial, path)
