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
- ``budget`` (medlink's default): the highest threshold that costs at most ``max_loss`` of the corpus's accuracy
  (0.05 points: at most one correct link in two thousand mentions turns nil), and never above ``min-fp``. DILBERT's
  rules leave the cost to the data: ``max-tp`` is set by one outlier, ``min-fp`` by the hardest negative.

Corpora have few nil mentions, so calibration also links medlink's own non-medical negatives
(:mod:`medlink.evaluation.negatives`) as nil mentions; those the linker refuses before searching (function words,
control characters) are nil under any threshold and do not move it.

Each strategy's accuracy (nil counted as a label) on the development set is reported, with the share of the
negatives it declares nil; ``auto`` keeps the most accurate of DILBERT's three.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import cast

from medlink.evaluation.corpus import Corpus
from medlink.evaluation.runner import Evaluation, evaluate, linker_mentions
from medlink.evaluation.scoring import Prediction, is_correct
from medlink.linking import Linker, LinkResult
from medlink.linking.mentions.non_terms import why_not_a_term

DILBERT_STRATEGIES = ("min-fp", "max-tp", "weighted")
STRATEGIES = (*DILBERT_STRATEGIES, "budget")
DEFAULT_STRATEGY = "budget"
DEFAULT_MAX_LOSS = 0.0005  # share of the mentions it may turn from right to nil; chosen on NCBI-disease dev
_NUDGE = 1e-6  # a mention scoring exactly at min-fp's threshold is itself nil
_NOT_SEARCHED = ("exact", "nil", "empty")  # stages whose score no threshold acts on


@dataclass(frozen=True)
class Calibration:
    strategy: str
    threshold: float | None
    thresholds: dict[str, float | None]
    accuracy: dict[str, float]  # dev accuracy (nil as a label) with each strategy's threshold, and with none
    true_positives: int
    false_positives: int
    negatives: int = 0  # generated non-medical texts linked as nil mentions
    negatives_nil: dict[str, float] | None = None  # share of them declared nil under each threshold
    term_model: dict[str, object] | None = None  # linking/mentions/term_model.py, when fitted


def _nil_under(prediction: Prediction, threshold: float | None, score: float | None) -> Prediction:
    if threshold is None or score is None or prediction.stage == "exact" or score >= threshold:
        return prediction
    return Prediction(stage="nil")


def strategy_thresholds(tp_scores: Sequence[float], nil_scores: Sequence[float]) -> dict[str, float | None]:
    """DILBERT's thresholds from the best scores of correct decisions and of decisions that should be nil."""
    min_fp = max(nil_scores) + _NUDGE if nil_scores else None
    max_tp = min(tp_scores) if tp_scores else None
    weighted = None
    if min_fp is not None and max_tp is not None:
        share_tp = len(tp_scores) / (len(tp_scores) + len(nil_scores))
        weighted = share_tp * min_fp + (1 - share_tp) * max_tp
    return {"min-fp": min_fp, "max-tp": max_tp, "weighted": weighted}


def budget_threshold(
    tp_scores: Sequence[float], nil_scores: Sequence[float], mentions: int, max_loss: float = DEFAULT_MAX_LOSS
) -> float | None:
    """The highest threshold below which at most ``max_loss × mentions`` correct decisions fall, capped at
    ``min-fp`` (no higher than needed to catch every nil case)."""
    if not tp_scores:
        return None
    may_lose = int(max_loss * mentions)
    ordered = sorted(tp_scores)
    threshold = ordered[may_lose] if may_lose < len(ordered) else ordered[-1] + _NUDGE
    return min(threshold, max(nil_scores) + _NUDGE) if nil_scores else threshold


def score_of(result: LinkResult) -> float | None:
    return result.score if result.stage.value not in _NOT_SEARCHED else None


@dataclass(frozen=True)
class Decisions:
    """What a linker decides with no nil rule at all, on a corpus and on negatives: every rule is chosen from it."""

    evaluation: Evaluation
    results: tuple[LinkResult, ...]  # one per corpus mention, as evaluated (documents included)
    negative_results: tuple[LinkResult, ...]  # one per negative the linker searches
    negatives: int  # all negatives given; those not searched are nil under any rule (linking/mentions/non_terms.py)

    @property
    def scores(self) -> list[float | None]:
        return [score_of(result) for result in self.results]

    def correct(self) -> list[LinkResult]:
        """The searched decisions that are right for an in-KB mention."""
        return [
            r
            for g, p, r in zip(self.evaluation.golds, self.evaluation.predictions, self.results, strict=True)
            if score_of(r) is not None and not g.is_nil and is_correct(g, p)
        ]

    @property
    def refused(self) -> int:
        """Negatives nil before any search (not terms: linking/mentions/non_terms.py), so under any rule."""
        return self.negatives - len(self.negative_results)

    def scored_negatives(self) -> list[LinkResult]:
        return [result for result in self.negative_results if score_of(result) is not None]


def decide(linker: Linker, corpus: Corpus, negatives: Sequence[str] = ()) -> Decisions:
    """Link ``corpus`` and the searchable ``negatives`` with ``linker``'s nil rules switched off."""
    unthresholded = linker.with_config(replace(linker.config, nil_threshold=0))
    evaluation = evaluate(unthresholded, corpus, ks=(1,))
    # The same mentions again, documents included: their keys are cached, so nothing is encoded twice.
    results = tuple(unthresholded.link_many(linker_mentions(corpus)))
    searched = [text for text in negatives if why_not_a_term(text, linker.terminology) is None]
    return Decisions(evaluation, results, tuple(unthresholded.link_many(searched)), len(negatives))


def calibrate(
    linker: Linker,
    corpus: Corpus,
    strategy: str = DEFAULT_STRATEGY,
    negatives: Sequence[str] = (),
    max_loss: float = DEFAULT_MAX_LOSS,
) -> Calibration:
    return calibrate_decisions(decide(linker, corpus, negatives), strategy, max_loss)


def calibrate_decisions(
    decisions: Decisions, strategy: str = DEFAULT_STRATEGY, max_loss: float = DEFAULT_MAX_LOSS
) -> Calibration:
    if strategy not in (*STRATEGIES, "auto"):
        raise ValueError(f"strategy must be auto or one of {', '.join(STRATEGIES)}, not {strategy!r}")
    evaluation, scores = decisions.evaluation, decisions.scores
    tp_scores = [cast(float, score_of(result)) for result in decisions.correct()]
    nil_scores = [s for g, s in zip(evaluation.golds, scores, strict=True) if s is not None and g.is_nil]
    negative_scores = [cast(float, score_of(result)) for result in decisions.scored_negatives()]
    unlinked = sum(1 for r in decisions.negative_results if r.stage.value in ("nil", "empty"))
    all_nil = [*nil_scores, *negative_scores]
    thresholds = strategy_thresholds(tp_scores, all_nil)
    thresholds["budget"] = budget_threshold(tp_scores, all_nil, len(evaluation.golds), max_loss)
    accuracy, negatives_nil = {}, {}
    for name, threshold in {**thresholds, "none": None}.items():
        if name != "none" and threshold is None:
            continue
        predictions = [_nil_under(p, threshold, s) for p, s in zip(evaluation.predictions, scores, strict=True)]
        correct = sum(is_correct(g, p) for g, p in zip(evaluation.golds, predictions, strict=True))
        accuracy[name] = correct / len(predictions) if predictions else 0.0
        if decisions.negatives:
            below = decisions.refused + sum(1 for s in negative_scores if s < threshold) if threshold is not None else 0
            negatives_nil[name] = (unlinked + below) / decisions.negatives
    if strategy == "auto":
        usable = [name for name in DILBERT_STRATEGIES if thresholds[name] is not None]
        strategy = max(usable, key=lambda n: (accuracy[n], -DILBERT_STRATEGIES.index(n))) if usable else "none"
    chosen = thresholds.get(strategy)
    return Calibration(
        strategy, chosen, thresholds, accuracy, len(tp_scores), len(all_nil), decisions.negatives, negatives_nil or None
    )
