"""Compressed graphs whose candidates are scored again from finer vectors kept on disk and read with ``pread``:
not mapped, so a linking process keeps none of their pages, and each search reads only its candidates' rows.

- ``pq``: each row as int8 × a per-dimension scale (``SOURCE.int8.npy``, ``SOURCE.scale.npy``), 384 bytes a name.
- ``sq4``: each candidate's 4-bit code (already mapped for the graph's search) plus its 4-bit residual, the
  difference between the vector and its decoded code at a per-dimension scale (``SOURCE.residual.npy``, two
  dimensions a byte; ``SOURCE.residual_scale.npy``): together about as fine as 8-bit codes, at 192 bytes a name.
  At 8.9 M names the 4-bit codes alone agreed with exact search over the encoder's vectors on 85 % of top names;
  the 8-bit codes on 98 % (docs/performance.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

_LEVELS = 7  # a residual is rounded to -7..7 steps of its dimension's scale, stored as 1..15 in a nibble


def vectors_file(source: str) -> str:
    return f"{source}.int8.npy"


def scale_file(source: str) -> str:
    return f"{source}.scale.npy"


def residual_file(source: str) -> str:
    return f"{source}.residual.npy"


def residual_scale_file(source: str) -> str:
    return f"{source}.residual_scale.npy"


def rescoring_files(source: str) -> tuple[str, ...]:
    return vectors_file(source), scale_file(source), residual_file(source), residual_scale_file(source)


def quantize(vectors: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(vectors / scale), -127, 127).astype(np.int8)


class _Rows(Protocol):
    def rows(self, rows: Sequence[int]) -> np.ndarray: ...

    def block(self, start: int, count: int) -> np.ndarray: ...


class _RowFile:
    """Fixed-width rows of a ``.npy`` file read with ``pread``, or a run of them through a memory map; refused with
    a ``ValueError`` naming the file unless it holds ``rows`` rows of ``width`` values of ``dtype``."""

    def __init__(self, path: Path, rows: int, width: int, dtype: type) -> None:
        self.path = path
        mapped = _loaded(path, mapped=True)
        self.offset, self.shape, self.dtype = mapped.offset, mapped.shape, mapped.dtype
        del mapped
        if self.shape != (rows, width) or self.dtype != np.dtype(dtype):
            raise ValueError(
                f"{path} holds {self.dtype} rows of shape {self.shape}, not {rows} × {width} {dtype.__name__}"
            )
        self.descriptor = os.open(path, os.O_RDONLY)

    def __del__(self) -> None:
        descriptor = getattr(self, "descriptor", None)
        if descriptor is not None:
            os.close(descriptor)

    def read(self, rows: Sequence[int]) -> np.ndarray:
        width = self.shape[1] * self.dtype.itemsize
        buffer = b"".join(os.pread(self.descriptor, width, self.offset + row * width) for row in rows)
        return np.frombuffer(buffer, dtype=self.dtype).reshape(len(rows), self.shape[1])

    def run(self, start: int, count: int) -> np.ndarray:
        return np.asarray(np.load(self.path, mmap_mode="r")[start : start + count])


def _loaded(path: Path, mapped: bool = False) -> Any:
    """The array in ``path`` (as a memory map when ``mapped``), else a ``ValueError`` naming the file."""
    try:
        return np.load(path, mmap_mode="r" if mapped else None)
    except (OSError, ValueError, EOFError) as error:
        raise ValueError(f"{path} is not a NumPy array file ({error})") from None


def _scale(path: Path, dimension: int) -> np.ndarray:
    """A per-dimension scale: ``dimension`` finite positive float32 values, else a ``ValueError`` naming the file."""
    scale = _loaded(path)
    if scale.shape != (dimension,) or scale.dtype != np.float32 or not np.all(np.isfinite(scale) & (scale > 0)):
        raise ValueError(f"{path} is not {dimension} positive scales")
    return scale


class Int8Rows:
    """The ``pq`` kind's rows: int8 × scale."""

    def __init__(self, index: Any, folder: Path, source: str) -> None:
        self.scale = _scale(folder / scale_file(source), index.d)
        self.file = _RowFile(folder / vectors_file(source), index.ntotal, index.d, np.int8)

    def rows(self, rows: Sequence[int]) -> np.ndarray:
        return self.file.read(rows).astype(np.float32) * self.scale

    def block(self, start: int, count: int) -> np.ndarray:
        return self.file.run(start, count).astype(np.float32) * self.scale


class ResidualRows:
    """The ``sq4`` kind's rows: the decoded 4-bit code plus the residual."""

    def __init__(self, index: Any, folder: Path, source: str) -> None:
        self.index = index
        self.scale = _scale(folder / residual_scale_file(source), index.d)
        self.file = _RowFile(folder / residual_file(source), index.ntotal, (index.d + 1) // 2, np.uint8)

    def rows(self, rows: Sequence[int]) -> np.ndarray:
        coarse = self.index.reconstruct_batch(np.asarray(rows, dtype=np.int64))
        return coarse + unpack_residuals(self.file.read(rows), self.scale)

    def block(self, start: int, count: int) -> np.ndarray:
        return self.index.reconstruct_n(start, count) + unpack_residuals(self.file.run(start, count), self.scale)


def residual_scale(vectors: np.ndarray, decoded: np.ndarray) -> np.ndarray:
    """Per dimension, the step that spans the largest residual of a sample in :data:`_LEVELS` steps."""
    return np.maximum(np.abs(vectors - decoded).max(axis=0), 1e-9).astype(np.float32) / _LEVELS


def pack_residuals(residuals: np.ndarray, scale: np.ndarray) -> np.ndarray:
    steps = (np.clip(np.rint(residuals / scale), -_LEVELS, _LEVELS) + _LEVELS + 1).astype(np.uint8)
    if steps.shape[1] % 2:
        steps = np.pad(steps, ((0, 0), (0, 1)))
    return steps[:, 0::2] | (steps[:, 1::2] << 4)


def unpack_residuals(packed: np.ndarray, scale: np.ndarray) -> np.ndarray:
    steps = np.empty((len(packed), packed.shape[1] * 2), dtype=np.float32)
    steps[:, 0::2], steps[:, 1::2] = packed & 15, packed >> 4
    return (steps[:, : len(scale)] - (_LEVELS + 1)) * scale


def write_residuals(
    storage: Any, chunks: Iterable[np.ndarray], rows: int, sample: np.ndarray, folder: Path, source: str
) -> None:
    """The residuals of ``chunks`` (all rows in order, unit vectors) against their codes in ``storage`` (a trained
    scalar quantizer index), the scale trained on ``sample``; each file written whole under a temporary name."""
    decode = storage.sa_decode
    sample = np.ascontiguousarray(sample, dtype=np.float32)
    scale = residual_scale(sample, decode(storage.sa_encode(sample)))
    partial = folder / f"{residual_file(source)}.partial"
    packed = np.lib.format.open_memmap(partial, mode="w+", dtype=np.uint8, shape=(rows, (storage.d + 1) // 2))
    start = 0
    for chunk in chunks:
        chunk = np.ascontiguousarray(chunk, dtype=np.float32)
        packed[start : start + len(chunk)] = pack_residuals(chunk - decode(storage.sa_encode(chunk)), scale)
        start += len(chunk)
    if start != rows:
        raise ValueError(f"{start} vectors for {rows} rows")
    packed.flush()
    del packed
    np.save(folder / residual_scale_file(source), scale)
    os.replace(partial, folder / residual_file(source))


def row_reader(index: Any, folder: Path, source: str, codes: str) -> _Rows:
    return Int8Rows(index, folder, source) if codes == "pq" else ResidualRows(index, folder, source)


class Rescored:
    """A graph whose candidates are re-scored from rows read from disk; searched like a FAISS index."""

    def __init__(self, index: Any, rows: _Rows, rescore: int, ef_search: int) -> None:
        self.index, self.rescore, self._rows = index, rescore, rows
        self.index.hnsw.efSearch = ef_search  # the manifest's value: tunable without a rebuild
        self.ntotal = index.ntotal

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        _, candidates = self.index.search(queries, min(self.ntotal, max(k * self.rescore, self.index.hnsw.efSearch)))
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        found = np.full((len(queries), k), -1, dtype=np.int64)
        for number, (query, rows) in enumerate(zip(queries, candidates, strict=True)):
            rows = np.unique(rows[rows >= 0])  # sorted: the reads go forward through the file
            if not len(rows):
                continue
            exact = self._rows.rows(rows.tolist()) @ query
            best = np.argsort(-exact, kind="stable")[:k]
            scores[number, : len(best)], found[number, : len(best)] = exact[best], rows[best]
        return scores, found

    def reconstruct_n(self, start: int, count: int) -> np.ndarray:
        """A run of rows (concept centroids read them all): sequential, unlike a search."""
        return self._rows.block(start, count)

    def reconstruct_batch(self, rows: np.ndarray) -> np.ndarray:
        return self._rows.rows(rows.tolist())
