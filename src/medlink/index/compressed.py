"""The compressed index kind for terminologies of the UMLS's size: a graph over PQ codes in memory, int8 vectors
on disk.

HNSW over fp16 vectors needs about 1 KB per name in memory (vectors and graph): 12 GB for the UMLS's 12 M names.
Here each name costs ``subquantizers`` bytes of product-quantized code (96 for 384 dimensions) and its HNSW links
(``links`` × 8 bytes at the base layer) in memory, and 1 byte per dimension on disk. A search walks the graph over
the PQ codes for ``rescore`` × k candidates, then re-scores them exactly from the int8 vectors, read with
``pread`` one row at a time rather than memory-mapped (a mapped page brings its neighbours into the process's
resident set; a read leaves them in the page cache that every process on the machine shares).

An inverted file (IVF-PQ) was tried first: a name only moderately similar to the mention (cosine ~0.65, common in
clinical text) can sit in a cell whose centroid the query is far from, and even 200 of 825 cells probed missed one
such name on NCBI-disease. The graph reaches more of them (Acc@5 93.65 against IVF-PQ's 93.54; Acc@1 90.83 for
both, against 91.04 for HNSW over fp16 vectors: docs/performance.md).

Files beside ``SOURCE.faiss`` (the HNSW-PQ index): ``SOURCE.int8.npy`` (rows × dimension, int8) and
``SOURCE.scale.npy`` (float32 per dimension: a vector is ``int8 × scale``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

_ADD_CHUNK = 65_536


@dataclass(frozen=True)
class CompressedParameters:
    """``links``: HNSW links per node (memory, recall); ``ef_construction``: build-time beam; ``ef_search``:
    search-time beam, the speed/recall knob (the manifest's value is applied on load: tunable without a rebuild);
    ``subquantizers``: PQ bytes per vector (default dimension / 4); ``rescore``: candidates re-scored exactly per
    result asked; ``training``: vectors sampled to train the PQ codebooks. The defaults agreed with exact search on
    the top name for 99.05 % of 2,000 unseen mentions over a million UMLS-like names at 444 searches/s (16 links
    and ef_search 512: 98.65 %; docs/performance.md); 24 links cost ~2.3 GB of graph at 12 M names, which with the
    codes still fits the 4 GB target."""

    links: int = 24
    ef_construction: int = 200
    ef_search: int = 768
    subquantizers: int | None = None
    rescore: int = 20
    training: int = 200_000

    @staticmethod
    def bits_for(rows: int) -> int:
        """Bits per PQ code: 8, fewer only when there are not 256 vectors to train each codebook on."""
        return max(1, min(8, int(np.log2(max(rows, 2)))))

    def subquantizers_for(self, dimension: int) -> int:
        wanted = self.subquantizers or max(1, dimension // 4)
        while dimension % wanted:  # PQ splits the dimensions evenly
            wanted -= 1
        return wanted


def vectors_file(source: str) -> str:
    return f"{source}.int8.npy"


def scale_file(source: str) -> str:
    return f"{source}.scale.npy"


def write_compressed(vectors: np.ndarray, folder: Path, source: str, parameters: CompressedParameters) -> Any:
    """Train and fill an HNSW-PQ index over ``vectors`` (unit vectors, any float array, a memory map included: it
    is read in chunks) and write the int8 copy beside it; returns the FAISS index for the caller to write. The
    graph uses L2 distance, which ranks unit vectors as cosine does."""
    import faiss

    rows, dimension = vectors.shape
    sample = np.ascontiguousarray(vectors[_sample_rows(rows, parameters.training)], dtype=np.float32)
    scale = np.maximum(np.abs(sample).max(axis=0), 1e-6).astype(np.float32) / 127.0
    np.save(folder / scale_file(source), scale)
    codes = np.lib.format.open_memmap(folder / vectors_file(source), mode="w+", dtype=np.int8, shape=(rows, dimension))
    # faiss's stubs list one overload of the constructor; this is its documented (d, pq_m, M, pq_nbits) form
    index: Any = faiss.IndexHNSWPQ(
        dimension,
        parameters.subquantizers_for(dimension),  # type: ignore[arg-type]
        parameters.links,
        parameters.bits_for(len(sample)),
    )
    codes_index: Any = faiss.downcast_index(index.storage)
    codes_index.pq.cp.min_points_per_centroid = 1  # the sample is all there is: no warning that more would help
    index.hnsw.efConstruction = parameters.ef_construction
    index.train(sample)
    for start in range(0, rows, _ADD_CHUNK):
        chunk = np.ascontiguousarray(vectors[start : start + _ADD_CHUNK], dtype=np.float32)
        index.add(chunk)
        codes[start : start + len(chunk)] = quantize(chunk, scale)
    codes.flush()
    del codes
    return index  # ef_search is set where it is read (Rescored), from the manifest


def quantize(vectors: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(vectors / scale), -127, 127).astype(np.int8)


def _sample_rows(rows: int, wanted: int) -> np.ndarray:
    """Evenly spaced rows (sorted: a memory map reads them in one pass)."""
    return np.unique(np.linspace(0, rows - 1, num=min(rows, wanted)).astype(np.int64))


class Rescored:
    """An HNSW-PQ index whose candidates are re-scored from the int8 vectors on disk; searched like a FAISS index."""

    def __init__(self, index: Any, folder: Path, source: str, parameters: CompressedParameters) -> None:
        self.index = index
        self.index.hnsw.efSearch = parameters.ef_search  # the manifest's value: tunable without a rebuild
        self.ntotal = index.ntotal
        self.rescore = parameters.rescore
        self.scale = np.load(folder / scale_file(source))
        self._path = folder / vectors_file(source)
        mapped = np.load(self._path, mmap_mode="r")
        self._offset, self._shape = mapped.offset, mapped.shape
        if self._shape[0] != self.ntotal:
            raise ValueError(f"{self._shape[0]} vectors for {self.ntotal} codes")
        del mapped
        self._descriptor = os.open(self._path, os.O_RDONLY)

    def __del__(self) -> None:
        descriptor = getattr(self, "_descriptor", None)
        if descriptor is not None:
            os.close(descriptor)

    def rows(self, rows: Sequence[int]) -> np.ndarray:
        """The int8 vectors of ``rows`` as float32 (``int8 × scale``)."""
        width = self._shape[1]
        buffer = b"".join(os.pread(self._descriptor, width, self._offset + row * width) for row in rows)
        return np.frombuffer(buffer, dtype=np.int8).reshape(len(rows), width).astype(np.float32) * self.scale

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        _, candidates = self.index.search(queries, min(self.ntotal, max(k * self.rescore, self.index.hnsw.efSearch)))
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        found = np.full((len(queries), k), -1, dtype=np.int64)
        for number, (query, rows) in enumerate(zip(queries, candidates, strict=True)):
            rows = np.unique(rows[rows >= 0])  # sorted: the reads go forward through the file
            if not len(rows):
                continue
            exact = self.rows(rows.tolist()) @ query
            best = np.argsort(-exact, kind="stable")[:k]
            scores[number, : len(best)], found[number, : len(best)] = exact[best], rows[best]
        return scores, found

    def reconstruct_n(self, start: int, count: int) -> np.ndarray:
        """A run of rows (concept centroids read them all), through a memory map: sequential, unlike a search."""
        mapped = np.load(self._path, mmap_mode="r")
        return mapped[start : start + count].astype(np.float32) * self.scale

    def reconstruct_batch(self, rows: np.ndarray) -> np.ndarray:
        return self.rows(rows.tolist())
