"""MCSM on hand-made vectors, where the nearest neighbours and so the score are known."""

import math

import numpy as np
import pytest

from medlink.evaluation.mcsm import ideal_mcsm, mcsm_scores


def test_perfectly_clustered_types_reach_the_ideal() -> None:
    # two tight clusters: rows 0-2 are type A, rows 3-5 type B
    vectors = np.array([[1, 0.01 * i, 0] for i in range(3)] + [[0, 1, 0.01 * i] for i in range(3)], np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    types = [frozenset({"A"})] * 3 + [frozenset({"B"})] * 3
    scores = mcsm_scores(vectors, types, k=2)
    assert scores == {"A": pytest.approx(ideal_mcsm(2)), "B": pytest.approx(ideal_mcsm(2))}


def test_mixed_neighbourhood_is_discounted_by_rank() -> None:
    # row 0 (A): nearest is row 1 (B), then row 2 (A)
    vectors = np.array([[1, 0], [0.99, 0.14], [0.9, 0.43], [0, 1]], np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    types = [frozenset({"A"}), frozenset({"B"}), frozenset({"A", "B"}), frozenset({"B"})]
    scores = mcsm_scores(vectors, types, k=2)
    # A: row 0 -> neighbours 1 (B), 2 (A,B): 0 + 1/log2(3); row 2 -> neighbours 1 (B), 0 (A): 0 + 1/log2(3)
    assert scores["A"] == pytest.approx(1 / math.log2(3))
    assert ideal_mcsm(40) == pytest.approx(11.09, abs=0.01)
