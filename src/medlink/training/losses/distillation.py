"""Embedding distillation: a small student learns to put terms where a larger teacher puts them.

For a batch of texts with teacher unit vectors t_i and student vectors s_i (normalized here):

    L = 1/n Σ_i (1 − cos(s_i, t_i))  +  λ · 1/n Σ_i KL( softmax_j(τ⁻¹ t_i·t_j) ‖ softmax_j(τ⁻¹ s_i·s_j) ),  j ≠ i

The first term matches each vector (Reimers & Gurevych 2020's MSE on unit vectors, up to a factor 2); the second
matches each row of in-batch similarities as a distribution (the relational, "contrastive" distillation of
Sun et al. 2020 / Tian et al. 2020). Linking is a ranking, so the second term spends the student's capacity on
the order of near neighbours — synonyms and look-alike names batched together — rather than on far pairs.

    loss = EmbeddingDistillationLoss()
    value = loss(student_vectors, teacher_unit_vectors)
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional


def similarity_kl(student: torch.Tensor, teacher: torch.Tensor, scale: float) -> torch.Tensor:
    """Mean over rows of KL(teacher row ‖ student row) of in-batch similarity softmaxes (unit vectors in)."""
    eye = torch.eye(len(student), dtype=torch.bool, device=student.device)
    student_log = functional.log_softmax((scale * student @ student.T).masked_fill(eye, float("-inf")), dim=1)
    teacher_log = functional.log_softmax((scale * teacher @ teacher.T).masked_fill(eye, float("-inf")), dim=1)
    # The diagonal is -inf in both; zero it so 0·(-inf - -inf) does not become nan.
    terms = (teacher_log.exp() * (teacher_log - student_log)).masked_fill(eye, 0.0)
    return terms.sum(1).mean()


class EmbeddingDistillationLoss(nn.Module):
    def __init__(self, relation_weight: float = 1.0, scale: float = 20.0) -> None:
        super().__init__()
        self.relation_weight, self.scale = relation_weight, scale

    def forward(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        student = functional.normalize(student, dim=1)
        teacher = functional.normalize(teacher, dim=1)
        loss = (1 - (student * teacher).sum(1)).mean()
        if self.relation_weight and len(student) > 1:
            loss = loss + self.relation_weight * similarity_kl(student, teacher, self.scale)
        return loss
