"""Choosing the nil threshold from labelled data (Miftahutdinov et al. §4, "Out-of-KB prediction").

On a development corpus, link every mention without a threshold and look at the best score of each dense
decision (exact matches are never nil):

- ``min-fp``: the threshold sits at the false positive closest to the terminology — the highest score among
  mentions whose gold is nil. Everything below becomes nil: nil decisions are sure, many in-KB mentions are lost.
- ``max-tp``: the threshold sits at the true positive farthest from it — the lowest score among correctly linked
  in-KB mentions. No correct link is lost; few nil mentions are caught.
- ``weighted``: their average, weighted by the share of true positives (for ``min-fp``) and of false positives
  (for ``max-tp``) among those decisions. The paper's wording gives "the proportion of TP cases" for both weights;
  we read the second as the false-positive share, the only reading under which the weights sum to one.

Each strategy's accuracy (nil counted as a label) on the development set is reported; ``auto`` keeps the best.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from medlink.evaluation.corpus import Corpus
from medlink.evaluation.runner import evaluate
from medlink.evaluation.scoring import Prediction, is_correct
from medlink.linking import Linker, LinkerConfig

STRATEGIES = ("min-fp", "max-tp", "weighted")
_NUDGE = 1e-6  # a mention scoring exactly at min-fp's threshold is itself nil


@dataclass(frozen=True)
class Calibration:
    strategy: str
    threshold: float | None
    thresholds: dict[str, float | None]
    accuracy: dict[str, float]  # dev accuracy (nil as a label) with each strategy's threshold, and with none
    true_positives: int
    false_positives: int


def _nil_under(prediction: Prediction, threshold: float | None, score: float | None) -> Prediction:
    if threshold is None or score is None or prediction.stage == "exact" or score >= threshold:
        return prediction
    return Prediction(stage="nil")


def strategy_thresholds(tp_scores: Sequence[float], nil_scores: Sequence[float]) -> dict[str, float | None]:
    """Each strategy's threshold from the best scores of correct decisions and of decisions that should be nil."""
    min_fp = max(nil_scores) + _NUDGE if nil_scores else None
    max_tp = min(tp_scores) if tp_scores else None
    weighted = None
    if min_fp is not None and max_tp is not None:
        share_tp = len(tp_scores) / (len(tp_scores) + len(nil_scores))
        weighted = share_tp * min_fp + (1 - share_tp) * max_tp
    return {"min-fp": min_fp, "max-tp": max_tp, "weighted": weighted}


def calibrate(linker: Linker, corpus: Corpus, strategy: str = "auto") -> Calibration:
    if strategy not in (*STRATEGIES, "auto"):
        raise ValueError(f"strategy must be auto or one of {', '.join(STRATEGIES)}, not {strategy!r}")
    unthresholded = Linker(linker.terminology, linker.sieves, replace(linker.config, nil_threshold=None))
    evaluation = evaluate(unthresholded, corpus, ks=(1,))
    results = unthresholded.link_many([m.text for m in corpus])  # cached: no second encoding
    scores = [r.score if r.stage.value not in ("exact", "nil", "empty") else None for r in results]
    nil_scores, tp_scores = [], []
    for gold, prediction, score in zip(evaluation.golds, evaluation.predictions, scores, strict=True):
        if score is None:
            continue
        if gold.is_nil:
            nil_scores.append(score)
        elif is_correct(gold, prediction):
            tp_scores.append(score)
    thresholds = strategy_thresholds(tp_scores, nil_scores)
    accuracy = {}
    for name, threshold in {**thresholds, "none": None}.items():
        if name != "none" and threshold is None:
            continue
        predictions = [_nil_under(p, threshold, s) for p, s in zip(evaluation.predictions, scores, strict=True)]
        correct = sum(is_correct(g, p) for g, p in zip(evaluation.golds, predictions, strict=True))
        accuracy[name] = correct / len(predictions) if predictions else 0.0
    if strategy == "auto":
        usable = [name for name in STRATEGIES if thresholds[name] is not None]
        strategy = max(usable, key=lambda name: (accuracy[name], -STRATEGIES.index(name))) if usable else "none"
    chosen = thresholds.get(strategy)
    return Calibration(strategy, chosen, thresholds, accuracy, len(tp_scores), len(nil_scores))


def calibrated_config(config: LinkerConfig, calibration: Calibration) -> LinkerConfig:
    return replace(config, nil_threshold=calibration.threshold)
