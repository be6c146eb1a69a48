"""How each registered sampler (training/registry.py) makes its batches from a training configuration.

Every function takes the run's configuration, examples and model (only ``mined`` reads the model) and returns the
batch sampler the training loop iterates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from medlink.training.config import TrainConfig
from medlink.training.examples import Examples, first_texts
from medlink.training.model import TermEncoderModel
from medlink.training.samplers.mined_batches import MinedBatchSampler
from medlink.training.samplers.model_negatives import model_neighbours
from medlink.training.samplers.positive_batches import PositiveBatchSampler
from medlink.training.samplers.sibling_batches import SiblingBatchSampler


def random_sampler(config: TrainConfig, examples: Examples, model: TermEncoderModel) -> PositiveBatchSampler:
    """Concepts drawn at random for each batch."""
    return PositiveBatchSampler(examples.labels, config.batch_size, config.per_concept, config.seed)


def sibling_sampler(config: TrainConfig, examples: Examples, model: TermEncoderModel) -> PositiveBatchSampler:
    """Concepts grouped by parent: siblings are the hard negatives."""
    return SiblingBatchSampler(examples.labels, examples.parents, config.batch_size, config.per_concept, config.seed)


def parent_sampler(config: TrainConfig, examples: Examples, model: TermEncoderModel) -> PositiveBatchSampler:
    """DILBERT's parent negatives: each concept batched with its parent concepts (those that have texts)."""
    label_of = {concept: label for label, concept in enumerate(examples.concepts)}
    found = [[label_of[p] for p in examples.parents[label] if p in label_of] for label in range(len(label_of))]
    return grouped(config, examples, lambda: found)


def mined_sampler(config: TrainConfig, examples: Examples, model: TermEncoderModel) -> PositiveBatchSampler:
    """Each concept with those the model itself confuses it with, re-mined every epoch (a resumed epoch mines with
    the restored model, not the one its first half was mined with)."""
    return grouped(config, examples, lambda: model_neighbours(model, examples, config.negatives + 1))


def tfidf_sampler(config: TrainConfig, examples: Examples, model: TermEncoderModel) -> PositiveBatchSampler:
    """Each concept with those whose names share the most character n-grams (computed once: they do not follow
    the model)."""
    from medlink.training.samplers.tfidf_negatives import tfidf_neighbours

    neighbours = tfidf_neighbours(first_texts(examples), config.negatives + 1)
    return grouped(config, examples, lambda: neighbours)


def code_prefix_sampler(config: TrainConfig, examples: Examples, model: TermEncoderModel) -> PositiveBatchSampler:
    """Each concept with concepts of the same code category (Liang et al. §3.1.2)."""
    from medlink.training.samplers.code_prefix_negatives import code_prefix_neighbours

    negatives = code_prefix_neighbours(examples.concepts, config.negatives + 1, config.code_prefix, config.seed)
    return grouped(config, examples, lambda: negatives)


def grouped(
    config: TrainConfig, examples: Examples, neighbours: Callable[[], Sequence[Sequence[int]]]
) -> MinedBatchSampler:
    """Batches of a concept and its negatives: ``neighbours()[label]`` lists them, called once per epoch."""
    return MinedBatchSampler(
        examples.labels, neighbours, config.batch_size, config.per_concept, config.seed, config.negatives + 1
    )
