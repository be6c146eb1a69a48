"""Supervised contrastive (InfoNCE) loss over concept labels (Khosla et al. 2020, L_out; with one positive per
anchor it is the in-batch "multiple negatives ranking" loss all-MiniLM-L6-v2 was trained with).

For an anchor ``i`` with in-batch positives P(i) (same concept) and every other row A(i) of the batch:

    L_i = −1/|P(i)| Σ_{p ∈ P(i)} log( exp(s·S_ip) / Σ_{a ∈ A(i)} exp(s·S_ia) )

averaged over anchors that have a positive; S is cosine similarity and s = 1/τ the scale (20, as MiniLM's own
training). Unlike multi-similarity with a fixed λ, every negative keeps a gradient proportional to its softmax
weight, so unrelated names are not left to drift together (docs/training.md: MS compressed MiniLM's space).

    loss = SupervisedContrastiveLoss()
    value = loss(vectors, concept_labels)
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional


def supervised_contrastive(similarity: torch.Tensor, positive: torch.Tensor, scale: float) -> torch.Tensor:
    """The loss for a similarity matrix and a boolean mask of positive pairs (the diagonal is never a candidate)."""
    eye = torch.eye(len(similarity), dtype=torch.bool, device=similarity.device)
    logits = (scale * similarity).masked_fill(eye, float("-inf"))
    log_probability = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    positive = positive & ~eye
    counts = positive.sum(1)
    anchors = counts > 0
    if not anchors.any():
        return similarity.sum() * 0.0
    per_anchor = torch.where(positive, log_probability, torch.zeros_like(log_probability)).sum(1)
    return -(per_anchor[anchors] / counts[anchors]).mean()


class SupervisedContrastiveLoss(nn.Module):
    def __init__(self, scale: float = 20.0) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        unit = functional.normalize(embeddings, dim=1)
        return supervised_contrastive(unit @ unit.T, labels[:, None] == labels[None, :], self.scale)
