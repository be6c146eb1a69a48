"""The losses and batch samplers ``medlink train`` offers, each registered once by name with where it lives.

Implementations import torch; listing the names (``medlink train --help``) must not, so entries are import paths,
resolved when a training run asks for one. An entry may also be the object itself (a loss class of your own).
"""

from __future__ import annotations

import importlib
from typing import Any

LOSSES: dict[str, Any] = {
    "batch-hard": "medlink.training.losses.batch_hard_soft_margin:BatchHardSoftMarginTripletLoss",  # Xu & Bethard
    "ms": "medlink.training.losses.multi_similarity:MultiSimilarityLoss",  # CODER
    "contrastive": "medlink.training.losses.supervised_contrastive:SupervisedContrastiveLoss",
    "triplet": "medlink.training.losses.triplet:InBatchTripletLoss",  # DILBERT
}
# Each names a function (TrainConfig, Examples, TermEncoderModel) -> PositiveBatchSampler.
SAMPLERS: dict[str, Any] = {
    name: f"medlink.training.samplers.by_name:{function}"
    for name, function in (
        ("random", "random_sampler"),
        ("siblings", "sibling_sampler"),
        ("parents", "parent_sampler"),
        ("mined", "mined_sampler"),
        ("tfidf", "tfidf_sampler"),
        ("code-prefix", "code_prefix_sampler"),
    )
}


def resolve(registry: dict[str, Any], name: str, what: str) -> Any:
    """The object ``name`` is registered as, or a ValueError listing the names there are."""
    if name not in registry:
        raise ValueError(f"{what} must be one of {', '.join(registry)}, not {name!r}")
    if not isinstance(registry[name], str):
        return registry[name]
    module, _, attribute = registry[name].partition(":")
    return getattr(importlib.import_module(module), attribute)
