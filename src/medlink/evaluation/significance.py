"""Paired significance tests between two systems scored on the same mentions.

- McNemar's test (McNemar 1947), as DILBERT and Xu & Bethard use: only the mentions where the systems disagree
  count. With fewer than 25 such mentions the exact two-sided binomial test is used, otherwise the chi-square
  statistic with continuity correction (1 degree of freedom).
- Paired bootstrap: resample mentions with replacement and read a confidence interval for the difference in
  accuracy (system A minus system B) off the percentiles.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

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
    correct_a: Sequence[bool], correct_b: Sequence[bool], samples: int = 10_000, confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapResult:  # fmt: skip
    if len(correct_a) != len(correct_b) or not correct_a:
        raise ValueError("both systems must be scored on the same, non-empty set of mentions")
    n = len(correct_a)
    deltas = [int(a) - int(b) for a, b in zip(correct_a, correct_b, strict=True)]
    rng = random.Random(seed)
    differences = sorted(sum(deltas[rng.randrange(n)] for _ in range(n)) / n for _ in range(samples))
    tail = (1 - confidence) / 2
    low = differences[math.floor(tail * (samples - 1))]
    high = differences[math.ceil((1 - tail) * (samples - 1))]
    return BootstrapResult(sum(deltas) / n, low, high, confidence, samples)
