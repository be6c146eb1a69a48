"""Choosing each field's nil threshold on trial records (DILBERT's strategies, ``medlink.evaluation.calibration``).

NLM's browse terms stand in for gold labels: a retrieval decision (dense, sparse or hybrid) whose concept or an
ancestor is a browse term of its record counts as a true positive, any other as a decision that should have been
nil. Each strategy's threshold is then tried on its own field and the one with the best F1 on these records is
kept. Linking is done once: trying a threshold (on a copy of the normalizer) re-reads the linkers' caches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from medlink.evaluation.calibration import strategy_thresholds
from medlink.trials.normalization.browse_terms import BrowseScorer
from medlink.trials.normalization.normalizer import CONDITION, DRUG, OTHER, NilThresholds, TrialNormalizer, field_of
from medlink.trials.records import TrialRecord

_RETRIEVAL_STAGES = ("dense", "sparse", "hybrid")


@dataclass(frozen=True)
class ThresholdCalibration:
    thresholds: NilThresholds
    candidates: dict[str, dict[str, float | None]]  # field → strategy → threshold
    f1: dict[str, dict[str, float]]  # field → strategy (or "none") → F1 of its field on the records

    def to_dict(self) -> dict[str, Any]:
        return {"thresholds": vars(self.thresholds), "candidates": self.candidates, "f1": self.f1}


def calibrate_thresholds(
    normalizer: TrialNormalizer, scorer: BrowseScorer, records: Sequence[TrialRecord]
) -> ThresholdCalibration:
    unthresholded = NilThresholds(None, None, None)
    trials = list(replace(normalizer, thresholds=unthresholded).normalize(records))
    scores: dict[str, tuple[list[float], list[float]]] = {f: ([], []) for f in (CONDITION, DRUG, OTHER)}
    for record, trial in zip(records, trials, strict=True):
        for items, browse in (
            (trial.conditions, record.condition_browse),
            (trial.interventions, record.intervention_browse),
        ):
            gold = scorer.gold_ids(browse)
            for item in items:
                if item.stage not in _RETRIEVAL_STAGES or item.score is None or not item.concepts:
                    continue
                field_name = CONDITION if item.type is None else field_of(item.type)
                correct = scorer.is_correct(item.concepts[0], gold)
                scores[field_name][0 if correct else 1].append(item.score)
    chosen = {}
    candidates: dict[str, dict[str, float | None]] = {}
    f1: dict[str, dict[str, float]] = {}
    for field_name, (tp_scores, nil_scores) in scores.items():
        candidates[field_name] = strategy_thresholds(tp_scores, nil_scores)
        f1[field_name] = {}
        for strategy, threshold in {**candidates[field_name], "none": None}.items():
            if strategy != "none" and threshold is None:
                continue
            trying = replace(normalizer, thresholds=replace(unthresholded, **{field_name: threshold}))
            evaluation = scorer.score(zip(records, trying.normalize(records), strict=True))
            tally = evaluation.conditions if field_name == CONDITION else evaluation.interventions
            f1[field_name][strategy] = round(tally.f1, 4)
        best = max(f1[field_name], key=lambda s: f1[field_name][s])
        chosen[field_name] = candidates[field_name].get(best) if best != "none" else None
    return ThresholdCalibration(NilThresholds(**chosen), candidates, f1)
