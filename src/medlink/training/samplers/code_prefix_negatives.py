"""Tree-coding negatives (Liang et al. 2021, §3.1.2): in a terminology whose codes are hierarchical (ICD-9
procedures, ICD-10-CM), concepts sharing a code prefix belong to one category ("01.3100" Meningotomy and "01.4101"
Thalamus incision share "01"); each concept is batched with ``k`` random concepts of its own category.

The prefix is taken from the code after the namespace (``ICD10CM:E11.9`` → ``E11`` for length 3). For codes that
carry no hierarchy (MeSH's D-numbers) the groups mean nothing: use parents or siblings there.
"""

from __future__ import annotations

import random
from collections.abc import Sequence


def code_prefix(concept_id: str, length: int) -> str:
    return concept_id.rpartition(":")[2][:length]


def code_prefix_neighbours(concepts: Sequence[str], k: int, length: int = 3, seed: int = 0) -> list[list[int]]:
    """For every position of ``concepts`` (concept ids, one per label), up to ``k`` other positions whose code
    shares its first ``length`` characters, drawn at random (seeded)."""
    if length < 1:
        raise ValueError("a code prefix needs at least one character")
    rng = random.Random(seed)
    groups: dict[str, list[int]] = {}
    for position, concept in enumerate(concepts):
        groups.setdefault(code_prefix(concept, length), []).append(position)
    nearest = []
    for position, concept in enumerate(concepts):
        others = [p for p in groups[code_prefix(concept, length)] if p != position]
        nearest.append(rng.sample(others, k) if len(others) > k else others)
    return nearest
