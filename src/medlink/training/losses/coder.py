"""CODER's knowledge-graph term (Yuan et al. 2022, §3.3): multi-similarity over term–relation–term pairs.

For a batch of triples (h_i, r_i, t_i), i = 1..k, with one matrix M_r per relation (initialised to the identity,
so S^rel starts as the plain cosine):

    S^rel_ij = cos(M_{r_i}ᵀ e_{h_i}, e_{t_j})          τ^rel_ij = 1 if t_i = t_j else 0
    L^rel_MS = the multi-similarity loss over (S^rel, τ^rel), anchors i = 1..k (the true tail counts)

and the total loss is L = L_MS + μ · L^rel_MS, with L_MS over the 2k terms of heads and tails labelled by concept.

    loss = CoderLoss(relations=12, dimension=384, mu=1.0)
    value = loss(head_vectors, relation_ids, tail_vectors, head_concepts, tail_concepts)
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional

from medlink.training.losses.multi_similarity import MultiSimilarityLoss, multi_similarity


class RelationMultiSimilarityLoss(nn.Module):
    def __init__(
        self,
        relations: int,
        dimension: int,
        alpha: float = 2.0,
        beta: float = 50.0,
        lam: float = 0.5,
        epsilon: float = 0.1,
    ) -> None:
        super().__init__()
        self.matrices = nn.Parameter(torch.eye(dimension).repeat(relations, 1, 1))
        self.alpha, self.beta, self.lam, self.epsilon = alpha, beta, lam, epsilon

    def similarity(self, heads: torch.Tensor, relation_ids: torch.Tensor, tails: torch.Tensor) -> torch.Tensor:
        """S^rel: row i compares M_{r_i}ᵀ e_{h_i} with every tail of the batch."""
        projected = torch.einsum("kd,kde->ke", heads, self.matrices[relation_ids])  # (M_r)ᵀ h as a row vector
        return functional.normalize(projected, dim=1) @ functional.normalize(tails, dim=1).T

    def forward(
        self, heads: torch.Tensor, relation_ids: torch.Tensor, tails: torch.Tensor, tail_concepts: torch.Tensor
    ) -> torch.Tensor:
        positive = tail_concepts[:, None] == tail_concepts[None, :]
        return multi_similarity(
            self.similarity(heads, relation_ids, tails),
            positive,
            ~positive,
            self.alpha,
            self.beta,
            self.lam,
            self.epsilon,
        )


class CoderLoss(nn.Module):
    """L = L_MS (term-term, over heads and tails together) + μ · L^rel_MS."""

    def __init__(self, relations: int, dimension: int, mu: float = 1.0) -> None:
        super().__init__()
        self.terms = MultiSimilarityLoss()
        self.relations = RelationMultiSimilarityLoss(relations, dimension)
        self.mu = mu

    def forward(
        self,
        heads: torch.Tensor,
        relation_ids: torch.Tensor,
        tails: torch.Tensor,
        head_concepts: torch.Tensor,
        tail_concepts: torch.Tensor,
    ) -> torch.Tensor:
        terms = self.terms(torch.cat([heads, tails]), torch.cat([head_concepts, tail_concepts]))
        return terms + self.mu * self.relations(heads, relation_ids, tails, tail_concepts)
