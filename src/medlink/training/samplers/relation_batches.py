"""Batches of knowledge-graph triples for CODER's relation term (Yuan et al. 2022, §3.3).

Each optimizer step draws ``size`` (head, relation, tail) triples among concepts that have training texts (``is_a``
edges from the hierarchy and typed relations such as MRREL's), each concept represented by one of its texts chosen
at random. The draw for step ``n`` depends only on the seed and ``n``, so a resumed run sees the same triples.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from medlink.training.examples import Examples, rows_by_label


@dataclass(frozen=True)
class RelationBatch:
    head_rows: list[int]
    relation_ids: list[int]
    tail_rows: list[int]
    tail_labels: list[int]


class RelationBatchSampler:
    def __init__(self, examples: Examples, size: int, seed: int = 0) -> None:
        if not examples.relations:
            raise ValueError("the terminology has no relations between concepts with training texts")
        self.triples = examples.relations
        self.relation_names = sorted({relation for _, relation, _ in self.triples})
        self.relation_id = {name: i for i, name in enumerate(self.relation_names)}
        self.rows = rows_by_label(examples.labels)
        self.size, self.seed = size, seed

    def batch(self, step: int) -> RelationBatch:
        rng = random.Random(self.seed * 1_000_003 + step)
        chosen = rng.sample(self.triples, min(self.size, len(self.triples)))
        return RelationBatch(
            head_rows=[rng.choice(self.rows[head]) for head, _, _ in chosen],
            relation_ids=[self.relation_id[relation] for _, relation, _ in chosen],
            tail_rows=[rng.choice(self.rows[tail]) for _, _, tail in chosen],
            tail_labels=[tail for _, _, tail in chosen],
        )
