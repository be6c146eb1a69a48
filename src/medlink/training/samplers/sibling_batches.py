"""Batches that put siblings together, so in-batch mining meets hard negatives (DILBERT §3.2's sibling negatives,
delivered through the batch instead of as explicit triplets).

Random batches drawn from tens of thousands of concepts hold almost no confusable pairs: "Breast Neoplasms" rarely
shares a batch with "Ovarian Neoplasms". Here, every epoch, concepts are grouped by one of their parents (chosen
at random among several), the groups are shuffled, and consecutive concepts fill the batches; each concept still
brings ``per_concept`` of its texts, so every anchor keeps a positive (Xu & Bethard §4.2). Concepts without a
parent form groups of one and mix as in :class:`PositiveBatchSampler`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from medlink.training.samplers.positive_batches import PositiveBatchSampler


class SiblingBatchSampler(PositiveBatchSampler):
    def __init__(
        self,
        labels: Sequence[int],
        parents: Sequence[Sequence[str]],
        batch_size: int,
        per_concept: int = 2,
        seed: int = 0,
    ) -> None:
        """``parents[label]``: the parent ids of the concept with that label."""
        super().__init__(labels, batch_size, per_concept, seed)
        self.parents = parents

    def concept_order(self, rng: random.Random) -> list[int]:
        groups: dict[str, list[int]] = {}
        for label in sorted(self.rows):
            parents = self.parents[label]
            key = rng.choice(parents) if parents else f"#{label}"
            groups.setdefault(key, []).append(label)
        keys = sorted(groups)
        rng.shuffle(keys)
        order = []
        for key in keys:
            members = groups[key]
            rng.shuffle(members)
            order.extend(members)
        return order
