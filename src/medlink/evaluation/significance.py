"""Paired significance tests between two systems scored on the same mentions.

- McNemar's test (McNemar 1947), as DILBERT and Xu & Bethard use: only the mentions where the systems disagree
  count. With fewer than 25 such mentions the exact two-sided binomial test is used, otherwise the chi-square
  statistic with continuity correction (1 degree of freedom).
- Paired bootstrap: resample mentions (for annotation's F1, documents) with replacement and read a confidence
  interval for the difference in accuracy or F1 (system A minus system B) off the percentiles.
- Paired randomization (sign-flip) test for graded, per-query scores such as NDCG@10 (Smucker, Allan & Carterette
  2007, the IR community's default): under the null the two systems' scores of each query are exchangeable, so
  each query's difference keeps or flips its sign at random.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_EXACT_BELOW = 25


@dataclass(frozen=True)
class McNemarResult:
    only_a: int  # mentions system A gets right and B wrong
    only_b: int
    statistic: float
    p_value: float
    method: str  # "exact binomial" or "chi-square with continuity correction"


def mcnemar(correct_a: Sequence[bool], correct_b: Sequence[bool]) -> McNemarResult:
    if len(correct_a) != len(correct_b):
        raise ValueError("both systems must be scored on the same mentions")
    only_a = sum(a and not b for a, b in zip(correct_a, correct_b, strict=True))
    only_b = sum(b and not a for a, b in zip(correct_a, correct_b, strict=True))
    discordant = only_a + only_b
    if discordant == 0:
        return McNemarResult(only_a, only_b, 0.0, 1.0, "exact binomial")
    if discordant < _EXACT_BELOW:
        smaller = min(only_a, only_b)
        tail = sum(math.comb(discordant, i) for i in range(smaller + 1)) / 2**discordant
        return McNemarResult(only_a, only_b, float(smaller), min(1.0, 2 * tail), "exact binomial")
    statistic = (abs(only_a - only_b) - 1) ** 2 / discordant
    p_value = math.erfc(math.sqrt(statistic / 2))  # survival function of chi-square with 1 degree of freedom
    return McNemarResult(only_a, only_b, statistic, p_value, "chi-square with continuity correction")


@dataclass(frozen=True)
class BootstrapResult:
    difference: float  # accuracy of A minus accuracy of B on the full set
    low: float
    high: float
    confidence: float
    samples: int


def paired_bootstrap(
    correct_a: Sequence[bool],
    correct_b: Sequence[bool],
    samples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapResult:
    if len(correct_a) != len(correct_b) or not correct_a:
        raise ValueError("both systems must be scored on the same, non-empty set of mentions")
    n = len(correct_a)
    deltas = [int(a) - int(b) for a, b in zip(correct_a, correct_b, strict=True)]
    rng = random.Random(seed)
    differences = sorted(sum(deltas[rng.randrange(n)] for _ in range(n)) / n for _ in range(samples))
    return BootstrapResult(sum(deltas) / n, *_interval(differences, confidence), confidence, samples)


def _interval(differences: Any, confidence: float) -> tuple[float, float]:  # a sorted list or array
    """The percentile interval holding ``confidence`` of the sorted resampled ``differences``."""
    tail = (1 - confidence) / 2
    last = len(differences) - 1
    return float(differences[math.floor(tail * last)]), float(differences[math.ceil((1 - tail) * last)])


@dataclass(frozen=True)
class RandomizationResult:
    difference: float  # mean of A − B over the queries
    p_value: float  # two-sided
    queries: int
    samples: int


def paired_randomization(
    scores_a: Sequence[float], scores_b: Sequence[float], samples: int = 10_000, seed: int = 0
) -> RandomizationResult:
    if len(scores_a) != len(scores_b) or not scores_a:
        raise ValueError("both systems must be scored on the same, non-empty set of queries")
    deltas = [a - b for a, b in zip(scores_a, scores_b, strict=True)]
    observed = abs(sum(deltas))
    rng = random.Random(seed)
    at_least = sum(
        abs(sum(d if rng.random() < 0.5 else -d for d in deltas)) >= observed - 1e-12 for _ in range(samples)
    )
    return RandomizationResult(sum(deltas) / len(deltas), (at_least + 1) / (samples + 1), len(deltas), samples)


def paired_bootstrap_f1(
    counts_a: Sequence[tuple[int, int, int]],
    counts_b: Sequence[tuple[int, int, int]],
    samples: int = 2_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapResult:
    """The difference in F1 (A − B) of two systems that annotated the same documents, with a confidence interval
    from resampling documents: ``counts_*[i]`` are (right, found, gold) of document ``i``, F1 taken over the sums
    (as the corpus-level score is), not averaged per document."""
    import numpy as np

    if len(counts_a) != len(counts_b) or not counts_a:
        raise ValueError("both systems must be scored on the same, non-empty set of documents")
    a, b = np.asarray(counts_a, dtype=np.int64), np.asarray(counts_b, dtype=np.int64)
    if a.shape[1:] != (3,) or b.shape[1:] != (3,):
        raise ValueError("counts are (right, found, gold) per document")
    draws = np.random.default_rng(seed).integers(0, len(a), size=(samples, len(a)))
    differences = np.sort(_f1(a[draws].sum(axis=1)) - _f1(b[draws].sum(axis=1)))
    whole = float(_f1(a.sum(axis=0)[None])[0] - _f1(b.sum(axis=0)[None])[0])
    return BootstrapResult(whole, *_interval(differences, confidence), confidence, samples)


def _f1(sums: Any) -> Any:
    """F1 of each row of (right, found, gold) sums: 2 · right / (found + gold), 0 where both are 0."""
    import numpy as np

    right, found, gold = sums[:, 0], sums[:, 1], sums[:, 2]
    return np.divide(2 * right, found + gold, out=np.zeros(len(sums)), where=(found + gold) > 0)
