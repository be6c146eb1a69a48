"""Model-mined hard negatives: for every concept, the concepts the model being trained now puts nearest to it
(DILBERT §3.2; Liang et al.'s online negative sampling), recomputed each epoch by ``MinedBatchSampler``."""

from __future__ import annotations

import torch

from medlink.training.examples import Examples, first_texts
from medlink.training.model import TermEncoderModel
from medlink.training.runtime import autocast


def model_neighbours(model: TermEncoderModel, examples: Examples, k: int, batch_size: int = 256) -> list[list[int]]:
    """For every label, the labels whose first text the model now puts nearest to the label's first text.

    Exact search by blocks of matrix products on the model's device: on a GPU a few seconds for 400k concepts."""
    texts = first_texts(examples)
    labels = list(range(len(texts)))
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths batch with little padding
    device = next(model.parameters()).device
    vectors = torch.zeros((len(texts), model.dimension), dtype=torch.float32, device=device)
    was_training = model.training
    model.eval()
    with torch.no_grad(), autocast(device):
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            vectors[rows] = torch.nn.functional.normalize(model([texts[i] for i in rows]).float(), dim=1)
    model.train(was_training)
    nearest: list[list[int]] = []
    take = min(k + 1, len(labels))
    rows_per_block = max(1, 2**26 // max(1, len(labels)))  # a block of scores stays near 256 MB
    with torch.no_grad():
        for start in range(0, len(labels), rows_per_block):
            block = vectors[start : start + rows_per_block] @ vectors.T
            found = block.topk(take, dim=1).indices.tolist()
            for offset, row in enumerate(found):
                own = labels[start + offset]
                nearest.append([labels[j] for j in row if labels[j] != own][:k])
    return nearest
