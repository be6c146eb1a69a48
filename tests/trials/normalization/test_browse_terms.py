"""Normalization scored against NLM's browse terms; stable train / test splits."""

from __future__ import annotations

from medlink.trials.normalization.browse_terms import BrowseScorer, split_of
from medlink.trials.readers import read_trials
from support import XML_RECORDS


def test_browse_scoring_counts_ancestors_both_ways(normalizer, mesh) -> None:
    records = list(read_trials([XML_RECORDS[0]]))
    evaluation = BrowseScorer(mesh).score(zip(records, normalizer.normalize_batch(records), strict=True))
    # Adrenal Hyperplasia, Congenital is predicted and Adrenogenital Syndrome is its ancestor; NLM's "Hyperplasia"
    # is no tree ancestor of it (its algorithm matched the word), so it stays missed
    assert evaluation.conditions.to_dict()["precision"] == 1.0
    assert (evaluation.conditions.found, evaluation.conditions.gold) == (2, 3)
    assert (evaluation.interventions.correct, evaluation.interventions.predicted) == (3, 3)
    assert evaluation.by_type["Drug"].precision == 1.0


def test_splits_are_stable() -> None:
    assert {split_of(f"NCT{n:08d}") for n in range(50)} == {"train", "test"}
    assert split_of("NCT00000102") == split_of("NCT00000102")
