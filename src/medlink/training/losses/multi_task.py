"""Multi-task candidate-generator loss (Liang et al. 2021, eqs. 6–8).

    loss   = loss_t + loss_c
    loss_t = max(0, D(V_M, V_P) + margin − D(V_M, V_N))        (triplet, Euclidean distance)
    loss_c = −Σ y log ŷ                                           (cross-entropy over how many concepts)

ŷ comes from a small head on the mention's vector predicting whether it names 1, 2 or 3+ concepts. The head is
saved with the model and tells the linker how many concepts to return.

    head = ConceptCountHead(384)
    loss = MultiTaskLoss(head)
    value = loss(mentions, positives, negatives, counts)      # counts: number of gold concepts per mention
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional

from medlink.training.losses.triplet import TripletLoss

COUNT_CLASSES = 3  # one concept, two, three or more


def count_class(counts: torch.Tensor) -> torch.Tensor:
    """1 → class 0, 2 → class 1, 3 or more → class 2."""
    return counts.clamp(min=1, max=COUNT_CLASSES) - 1


class ConceptCountHead(nn.Module):
    """Predicts from a mention vector how many concepts it names (1, 2, 3+)."""

    def __init__(self, dimension: int) -> None:
        super().__init__()
        self.linear = nn.Linear(dimension, COUNT_CLASSES)

    def forward(self, mention_vectors: torch.Tensor) -> torch.Tensor:
        return self.linear(mention_vectors)

    def predict(self, mention_vectors: torch.Tensor) -> torch.Tensor:
        """The predicted number of concepts (1, 2 or 3)."""
        return self.forward(mention_vectors).argmax(dim=1) + 1

    def predictor(self):
        """The same head as plain numbers, for the linker (:class:`medlink.encoders.count_head`)."""
        from medlink.encoders.count_head import ConceptCountPredictor

        def plain(tensor: torch.Tensor):
            return tensor.detach().float().cpu().numpy()

        return ConceptCountPredictor(plain(self.linear.weight), plain(self.linear.bias))


def count_loss(head: ConceptCountHead, mention_vectors: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """loss_c of eq. 7: cross-entropy between the head's classes and the true number of concepts."""
    return functional.cross_entropy(head(mention_vectors), count_class(counts))


class MultiTaskLoss(nn.Module):
    def __init__(self, head: ConceptCountHead, margin: float = 1.0) -> None:
        super().__init__()
        self.head = head
        self.triplet = TripletLoss("euclidean", margin)

    def forward(
        self, mentions: torch.Tensor, positives: torch.Tensor, negatives: torch.Tensor, counts: torch.Tensor
    ) -> torch.Tensor:
        return self.triplet(mentions, positives, negatives) + count_loss(self.head, mentions, counts)
