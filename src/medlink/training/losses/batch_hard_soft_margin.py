"""Online batch-hard soft-margin triplet loss (Xu & Bethard 2021, eqs. 3–6).

With ``S`` the cosine similarities of the batch's texts, for every anchor ``i`` that has a positive in the batch:

    p = argmin_{j ≠ i, C(j) = C(i)} S_ij      (the hardest positive)
    n = argmax_{k: C(k) ≠ C(i)} S_ik           (the hardest negative)
    L(i) = ln(1 + exp(S_in − S_ip))            (softplus instead of the hinge)

averaged over those anchors. Batches must give every anchor a positive (``medlink.training`` samplers do).

    loss = BatchHardSoftMarginTripletLoss()
    value = loss(vectors, concept_labels)      # vectors (b, d), labels (b,) integer concept ids
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional


class BatchHardSoftMarginTripletLoss(nn.Module):
    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        unit = functional.normalize(embeddings, dim=1)
        similarity = unit @ unit.T
        same = labels[:, None] == labels[None, :]
        eye = torch.eye(len(labels), dtype=torch.bool, device=labels.device)
        positives, negatives = same & ~eye, ~same
        usable = positives.any(dim=1) & negatives.any(dim=1)
        if not usable.any():
            return similarity.sum() * 0.0  # no anchor has both: a zero that keeps the graph
        hardest_positive = similarity.masked_fill(~positives, float("inf")).min(dim=1).values
        hardest_negative = similarity.masked_fill(~negatives, float("-inf")).max(dim=1).values
        return functional.softplus(hardest_negative - hardest_positive)[usable].mean()
