"""FAISS indexes over unit vectors, inner product = cosine. Both kinds store fp16 codes (half of float32's memory,
scores within 1e-3 of float32).

Exact (``IndexScalarQuantizer``, fp16): scans every vector. Cost grows with the number of names: fine up to a
few hundred thousand rows for batch work, too slow for interactive linking against all of MeSH on 2 cores.

HNSW (``IndexHNSWSQ``, fp16), chosen automatically above :data:`HNSW_ABOVE` rows:
- ``M = 32`` links per node: recall close to exact on 384-d sentence embeddings; graph memory ≈ n·M·8 bytes
  (≈ 180 MB for 700k names). Lower M saves memory and build time and loses recall.
- ``efConstruction = 200``: build-time beam; higher builds a better graph, linearly slower to build.
- ``efSearch = 64`` (:attr:`HnswParameters.ef_search`): query-time beam; the speed/recall knob. Measured values are
  in docs/performance.md.

Compressed (HNSW over 8-bit codes mapped from disk, over 4-bit codes re-scored with 4-bit residuals, or over PQ
codes re-scored from int8 vectors;
:mod:`medlink.index.compressed`), chosen automatically above :data:`COMPRESSED_ABOVE` rows, where HNSW's ~1 KB per
name would no longer fit a laptop's memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HNSW_ABOVE = 50_000
COMPRESSED_ABOVE = 2_000_000
KINDS = ("auto", "exact", "hnsw", "compressed")
_ADD_CHUNK = 65_536


@dataclass(frozen=True)
class HnswParameters:
    """FAISS HNSW settings (docs/performance.md has the sweep). ``m``: links per node (memory, recall);
    ``ef_construction``: build-time beam (build time, graph quality); ``ef_search``: search-time beam, the speed /
    recall knob. Over 662k MeSH names, ef_search 64 searches ~1.7× faster than 128 at 97.8 % vs 98.9 % top-1
    agreement with brute force, and linked BC5CDR Chemical dev (5,304 mentions) identically; 32 lost one mention.
    A loaded index can search with another value (``VectorIndex.load(ef_search=...)``, ``--ef-search``)."""

    m: int = 32
    ef_construction: int = 200
    ef_search: int = 64


def choose_kind(rows: int, requested: str = "auto") -> str:
    if requested not in KINDS:
        raise ValueError(f"index kind must be one of {', '.join(KINDS)}, not {requested!r}")
    if requested != "auto":
        return requested
    return "compressed" if rows > COMPRESSED_ABOVE else "hnsw" if rows > HNSW_ABOVE else "exact"


def build_faiss(vectors: np.ndarray, kind: str, hnsw: HnswParameters):
    """A FAISS index over ``vectors`` (any float dtype, added in chunks so float32 copies stay small)."""
    import faiss

    dimension = vectors.shape[1]
    quantizer = faiss.ScalarQuantizer.QT_fp16
    index: Any
    if kind == "hnsw":
        # faiss's type stubs want a ScalarQuantizer object; the C++ constructor takes the quantizer type's value
        index = faiss.IndexHNSWSQ(dimension, quantizer, hnsw.m, faiss.METRIC_INNER_PRODUCT)  # type: ignore[arg-type]
        index.hnsw.efConstruction = hnsw.ef_construction
        index.hnsw.efSearch = hnsw.ef_search
    else:
        index = faiss.IndexScalarQuantizer(dimension, quantizer, faiss.METRIC_INNER_PRODUCT)
    index.train(np.zeros((1, dimension), dtype=np.float32))  # fp16 needs no statistics; FAISS wants the call
    for start in range(0, len(vectors), _ADD_CHUNK):
        index.add(np.ascontiguousarray(vectors[start : start + _ADD_CHUNK], dtype=np.float32))
    return index


def write_faiss(index, path: Path) -> None:
    import faiss

    faiss.write_index(index, str(path))


def read_faiss(path: Path, ef_search: int | None = None, mmap: bool = True):
    """Read an index. With ``mmap`` the vector codes are mapped in place (``IO_FLAG_MMAP_IFC``; plain
    ``IO_FLAG_MMAP`` still copies HNSW codes into memory): loading costs the HNSW graph only, and the pages of
    codes a search touches are file-backed, shared with the page cache. Indexes are replaced by renaming
    folders, so a mapped file never changes under a running process."""
    import faiss

    index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC if mmap else 0)
    if ef_search is not None and hasattr(index, "hnsw"):
        index.hnsw.efSearch = ef_search
    return index


def search(index, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores and row ids, best first; rows of -1 pad when the index has fewer than ``k`` vectors."""
    if index.ntotal == 0:
        empty = np.full((len(queries), k), -1, dtype=np.int64)
        return np.full((len(queries), k), -np.inf, dtype=np.float32), empty
    return index.search(np.ascontiguousarray(queries, dtype=np.float32), min(k, index.ntotal))
