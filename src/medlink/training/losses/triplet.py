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


class InBatchTripletLoss(nn.Module):
    """DILBERT's triplets drawn from a batch of concept-labelled texts: every text with a positive in the batch is
    an anchor, with one positive (a text of its concept) and one negative (a text of another concept) picked at
    random. Which concepts share the batch decides the kind of negative: random concepts, siblings, parents or
    the model's own confusions (``medlink train --sampler``)."""

    def __init__(self, distance: str = "cosine", margin: float = 0.5, seed: int = 0) -> None:
        super().__init__()
        self.triplet = TripletLoss(distance, margin)
        self.generator = torch.Generator().manual_seed(seed)

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        same = labels[:, None] == labels[None, :]
        positive = same & ~torch.eye(len(labels), dtype=torch.bool, device=labels.device)
        anchors = torch.nonzero(positive.any(1) & (~same).any(1)).squeeze(1)
        if len(anchors) == 0:
            return embeddings.sum() * 0.0
        noise = torch.rand((len(anchors), len(labels)), generator=self.generator).to(labels.device)
        # the highest random score among a row's allowed columns is a uniform pick among them
        positives = torch.where(positive[anchors], noise, -1.0).argmax(1)
        negatives = torch.where(~same[anchors], noise, -1.0).argmax(1)
        return self.triplet(embeddings[anchors], embeddings[positives], embeddings[negatives])
