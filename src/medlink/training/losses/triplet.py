"""Triplet margin loss (DILBERT, Miftahutdinov et al. 2021, eq. 3).

    L = max(d(m, c_g) − d(m, c_n) + ε, 0)

for a mention ``m``, a name of its gold concept ``c_g`` and a name of another concept ``c_n``; ``d`` is the
Euclidean distance or the cosine distance 1 − cos. DILBERT uses ε = 1. Averaged over the batch.

    loss = TripletLoss(distance="cosine", margin=0.5)
    value = loss(mention_vectors, positive_vectors, negative_vectors)
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional


class TripletLoss(nn.Module):
    def __init__(self, distance: str = "euclidean", margin: float = 1.0) -> None:
        super().__init__()
        if distance not in ("euclidean", "cosine"):
            raise ValueError(f"distance must be 'euclidean' or 'cosine', not {distance!r}")
        self.distance, self.margin = distance, margin

    def _distance(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if self.distance == "euclidean":
            return functional.pairwise_distance(a, b, eps=0.0)
        return 1 - functional.cosine_similarity(a, b)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        gap = self._distance(anchor, positive) - self._distance(anchor, negative) + self.margin
        return functional.relu(gap).mean()
