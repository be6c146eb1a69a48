"""Training objectives, one per module, each with its formula and paper section in the docstring."""

from medlink.training.losses.batch_hard_soft_margin import BatchHardSoftMarginTripletLoss
from medlink.training.losses.coder import CoderLoss, RelationMultiSimilarityLoss
from medlink.training.losses.distillation import EmbeddingDistillationLoss
from medlink.training.losses.multi_similarity import MultiSimilarityLoss, multi_similarity
from medlink.training.losses.multi_task import ConceptCountHead, MultiTaskLoss, count_class
from medlink.training.losses.supervised_contrastive import SupervisedContrastiveLoss, supervised_contrastive
from medlink.training.losses.triplet import InBatchTripletLoss, TripletLoss

__all__ = [
    "BatchHardSoftMarginTripletLoss",
    "CoderLoss",
    "ConceptCountHead",
    "EmbeddingDistillationLoss",
    "InBatchTripletLoss",
    "MultiSimilarityLoss",
    "MultiTaskLoss",
    "RelationMultiSimilarityLoss",
    "SupervisedContrastiveLoss",
    "TripletLoss",
    "count_class",
    "multi_similarity",
    "supervised_contrastive",
]
