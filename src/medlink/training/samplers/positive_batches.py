"""Batches in which every anchor has a positive, for in-batch mining (Xu & Bethard §4.2; CODER's m repeats, §3.3).

Each batch is built from ``batch_size // per_concept`` concepts, ``per_concept`` texts each (a concept with fewer
texts contributes what it has, repeated). Every epoch visits concepts in a new seeded order, so training is
reproducible and every concept appears once per epoch.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from medlink.training.examples import rows_by_label


class PositiveBatchSampler:
    def __init__(self, labels: Sequence[int], batch_size: int, per_concept: int = 2, seed: int = 0) -> None:
        if per_concept < 2 or batch_size < 2 * per_concept:
            raise ValueError("need per_concept >= 2 and room for at least two concepts per batch")
        self.rows = rows_by_label(labels)
        self.batch_size, self.per_concept, self.seed = batch_size, per_concept, seed
        self.epoch = 0

    def __len__(self) -> int:
        concepts_per_batch = self.batch_size // self.per_concept
        return -(-len(self.rows) // concepts_per_batch)

    def concept_order(self, rng: random.Random) -> list[int]:
        """The order in which an epoch visits the concepts (labels): a seeded shuffle."""
        order = list(self.rows)
        rng.shuffle(order)
        return order

    def __iter__(self) -> Iterator[list[int]]:
        rng = random.Random(self.seed * 1_000_003 + self.epoch)
        self.epoch += 1
        order = self.concept_order(rng)
        concepts_per_batch = self.batch_size // self.per_concept
        for start in range(0, len(order), concepts_per_batch):
            batch = []
            for label in order[start : start + concepts_per_batch]:
                rows = self.rows[label]
                chosen = (
                    rng.sample(rows, self.per_concept)
                    if len(rows) >= self.per_concept
                    else [rows[i % len(rows)] for i in range(self.per_concept)]
                )
                batch.extend(chosen)
            yield batch
