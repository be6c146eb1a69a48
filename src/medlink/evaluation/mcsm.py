"""Medical Conceptual Similarity Measure (Choi et al. 2016; CODER §4.5): embedding quality beyond linking.

    MCSM(V, T, k) = 1/|V(T)| · Σ_{v ∈ V(T)} Σ_{i=1..k} 1_T(v(i)) / log2(i + 1)

For every concept ``v`` of semantic type ``T``, its ``k`` nearest other concepts are found (each concept is the
embedding of its preferred name), and neighbours of the same type count with a logarithmic discount. The best
possible score is Σ_{i=1..k} 1/log2(i+1) (≈ 11.09 for k = 40). A concept may have several types (MeSH tree
categories); a neighbour counts when it has ``T`` among its types.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np

from medlink.encoders.base import Encoder
from medlink.terminology import Terminology

MCSM_NEIGHBOURS = 40  # CODER's k: how many nearest names are read for each


def ideal_mcsm(k: int) -> float:
    return sum(1 / math.log2(i + 1) for i in range(1, k + 1))


def mcsm_scores(vectors: np.ndarray, types: Sequence[frozenset[str]], k: int = MCSM_NEIGHBOURS) -> dict[str, float]:
    """MCSM per semantic type from unit vectors (one row per concept) and each concept's set of types."""
    from medlink.index import faiss_backend

    index = faiss_backend.build_faiss(vectors, "exact", faiss_backend.HnswParameters())
    _, neighbours = faiss_backend.search(index, vectors, k + 1)
    discounts = np.array([1 / math.log2(i + 1) for i in range(1, k + 1)])
    totals: dict[str, float] = {}
    counts: dict[str, int] = {}
    for row, own_types in enumerate(types):
        others = [n for n in neighbours[row] if n != row and n >= 0][:k]
        for semantic_type in own_types:
            hits = np.array([semantic_type in types[n] for n in others], dtype=float)
            totals[semantic_type] = totals.get(semantic_type, 0.0) + float(hits @ discounts[: len(hits)])
            counts[semantic_type] = counts.get(semantic_type, 0) + 1
    return {semantic_type: totals[semantic_type] / counts[semantic_type] for semantic_type in sorted(totals)}


def mcsm(
    terminology: Terminology,
    encoder: Encoder,
    k: int = MCSM_NEIGHBOURS,
    sample: int | None = None,
    seed: int = 0,
    min_concepts: int = 50,
) -> dict[str, float]:
    """MCSM of ``encoder`` on the typed concepts of ``terminology`` (a fixed random sample if ``sample``)."""
    rows = [row for row, types in enumerate(terminology.concepts["semantic_types"]) if types]
    if sample is not None and sample < len(rows):
        rows = sorted(random.Random(seed).sample(rows, sample))
    names = [terminology.concepts["preferred_name"][row] for row in rows]
    types = [frozenset(terminology.concepts["semantic_types"][row]) for row in rows]
    scores = mcsm_scores(encoder.encode(names), types, k)
    sizes = {t: sum(t in concept_types for concept_types in types) for t in scores}
    return {t: score for t, score in scores.items() if sizes[t] >= min_concepts}
