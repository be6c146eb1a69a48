"""Batches of concepts the current model confuses: model-mined hard negatives, refreshed every epoch.

DILBERT's re-sampling (§3.2, after Gillick et al.) and Liang et al.'s online negative sampling (Algorithm 1) both
take, with the model being trained, the candidates ranked above or near the gold concept as negatives. Here they
arrive through the batch: at the start of each epoch ``neighbours()`` gives, for every concept, the concepts the
model now puts nearest to it; each batch is filled with a seed concept and its nearest unvisited neighbours, every
one with ``per_concept`` texts, so in-batch losses (multi-similarity, batch-hard) meet exactly the confusions the
model still makes, and every anchor keeps a positive.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from medlink.training.samplers.positive_batches import PositiveBatchSampler


class MinedBatchSampler(PositiveBatchSampler):
    def __init__(
        self,
        labels: Sequence[int],
        neighbours: Callable[[], Sequence[Sequence[int]]],
        batch_size: int,
        per_concept: int = 2,
        seed: int = 0,
        group_size: int = 4,
    ) -> None:
        """``neighbours()[label]``: labels of the concepts nearest to that label's concept, nearest first (called
        once per epoch, with the model as it is then). ``group_size``: a seed concept and up to this many minus one
        of its neighbours sit together; several groups fill a batch."""
        super().__init__(labels, batch_size, per_concept, seed)
        if group_size < 2:
            raise ValueError("group_size must be at least 2: a concept and one of its neighbours")
        self.neighbours, self.group_size = neighbours, group_size

    def concept_order(self, rng: random.Random) -> list[int]:
        nearest = self.neighbours()
        seeds = sorted(self.rows)
        rng.shuffle(seeds)
        visited: set[int] = set()
        order: list[int] = []
        for seed in seeds:
            if seed in visited:
                continue
            group = [seed]
            for other in nearest[seed]:
                if len(group) == self.group_size:
                    break
                if other != seed and other not in visited and other in self.rows and other not in group:
                    group.append(other)
            visited.update(group)
            order.extend(group)
        return order
