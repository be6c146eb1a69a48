"""Multi-similarity loss with hard-pair mining (Wang et al. 2019, as used by CODER, Yuan et al. 2022, §3.3).

For an anchor ``i`` with positives (τ_ij = 1) and negatives (τ_ij = 0):

    N_i = {j | τ_ij = 0, S_ij > min_{τ_ik = 1} S_ik − ε}      (negatives harder than the easiest positive)
    P_i = {j | τ_ij = 1, S_ij < max_{τ_ik = 0} S_ik + ε}      (positives harder than the hardest negative)
    L_i = log(1 + Σ_{P_i} exp(−α(S_ij − λ))) / α + log(1 + Σ_{N_i} exp(β(S_ij − λ))) / β

averaged over anchors. CODER: α = 2, β = 50, λ = 0.5, ε = 0.1. An empty P_i or N_i contributes 0.

    loss = MultiSimilarityLoss()
    value = loss(vectors, concept_labels)      # term-term pairs of a batch; the anchor itself is excluded
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional


def multi_similarity(
    similarity: torch.Tensor,
    positive: torch.Tensor,
    negative: torch.Tensor,
    alpha: float,
    beta: float,
    lam: float,
    epsilon: float,
) -> torch.Tensor:
    """The MS loss for a similarity matrix and boolean masks of which pairs are positive and negative."""
    inf = torch.tensor(float("inf"), dtype=similarity.dtype, device=similarity.device)
    easiest_positive = torch.where(positive, similarity, inf).min(dim=1, keepdim=True).values
    hardest_negative = torch.where(negative, similarity, -inf).max(dim=1, keepdim=True).values
    mined_negative = negative & (similarity > easiest_positive - epsilon)
    mined_positive = positive & (similarity < hardest_negative + epsilon)
    zero = torch.zeros((), dtype=similarity.dtype, device=similarity.device)
    positive_term = torch.log1p(torch.where(mined_positive, torch.exp(-alpha * (similarity - lam)), zero).sum(1))
    negative_term = torch.log1p(torch.where(mined_negative, torch.exp(beta * (similarity - lam)), zero).sum(1))
    return (positive_term / alpha + negative_term / beta).mean()


class MultiSimilarityLoss(nn.Module):
    def __init__(self, alpha: float = 2.0, beta: float = 50.0, lam: float = 0.5, epsilon: float = 0.1) -> None:
        super().__init__()
        self.alpha, self.beta, self.lam, self.epsilon = alpha, beta, lam, epsilon

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        unit = functional.normalize(embeddings, dim=1)
        same = labels[:, None] == labels[None, :]
        eye = torch.eye(len(labels), dtype=torch.bool, device=labels.device)
        return multi_similarity(unit @ unit.T, same & ~eye, ~same, self.alpha, self.beta, self.lam, self.epsilon)
