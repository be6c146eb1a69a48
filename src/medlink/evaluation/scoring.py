"""The strict scorer: Acc@k at the concept-id level, composite and multi-concept mentions, nil, MRR.

Strict rules (the default):

- a single-part gold is found at k when one of the top-k ranked ids is one of its alternatives (PubTator ``+``);
  a prediction that *claims* several concepts for it is wrong (the predicted set must equal the gold set);
- a gold with several parts (composite ``|``, or CHIP-CDN's several concepts) is right only when every part is:
  the prediction's parts (or, when it was not split, its claimed concepts) must match the gold parts one to one
  (Miftahutdinov et al. §5.4; Liang et al. §4.2). Order does not matter;
- a nil gold is right only when the prediction is nil; a nil prediction for an in-KB gold is wrong.

``lenient`` is SapBERT's rule, offered only to compare with published numbers: a mention counts as right at k when
any top-k id overlaps any gold id, so a composite with one part found, or a set with one member found, passes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from medlink.evaluation.corpus import Gold

Mode = Literal["strict", "lenient"]


@dataclass(frozen=True)
class Prediction:
    """What a system said about one mention.

    concepts: the concepts it claims (one for an ordinary mention, several for a multi-concept one), () for nil.
    ranked: candidate ids best first, for Acc@k and MRR; defaults to ``concepts``.
    parts: one prediction per part when the system split a composite mention.
    """

    concepts: tuple[str, ...] = ()
    ranked: tuple[str, ...] = ()
    parts: tuple[Prediction, ...] = ()
    stage: str = ""
    matched_name: str = ""

    @property
    def ranking(self) -> tuple[str, ...]:
        return self.ranked or self.concepts

    @property
    def is_nil(self) -> bool:
        return not self.concepts and not self.parts


def _hit(ranking: Sequence[str], alternatives: Sequence[str], k: int) -> bool:
    return any(identifier in alternatives for identifier in ranking[:k])


def _perfect_matching(rows: int, columns: int, fits: Callable[[int, int], bool]) -> bool:
    """Whether every row can be paired with a distinct column it fits (Kuhn's augmenting paths)."""
    if rows != columns:
        return False
    owner: list[int | None] = [None] * columns

    def place(row: int, seen: set[int]) -> bool:
        for column in range(columns):
            if column not in seen and fits(row, column):
                seen.add(column)
                if owner[column] is None or place(owner[column], seen):  # type: ignore[arg-type]
                    owner[column] = row
                    return True
        return False

    return all(place(row, set()) for row in range(rows))


def is_correct(gold: Gold, prediction: Prediction, k: int = 1, mode: Mode = "strict") -> bool:
    """Whether ``prediction`` is right for ``gold`` at rank ``k`` under ``mode``."""
    if gold.is_nil or prediction.is_nil:
        return gold.is_nil and prediction.is_nil
    if mode == "lenient":
        predicted = {i for p in (prediction, *prediction.parts) for i in p.ranking[:k]}
        return bool(predicted & gold.ids())
    parts = gold.parts
    if prediction.parts:
        return _perfect_matching(
            len(prediction.parts), len(parts), lambda row, column: _hit(prediction.parts[row].ranking, parts[column], k)
        )
    if len(parts) == 1:
        return len(prediction.concepts) <= 1 and _hit(prediction.ranking, parts[0], k)
    claimed = prediction.concepts
    return _perfect_matching(len(claimed), len(parts), lambda row, column: claimed[row] in parts[column])


def rank_of_gold(gold: Gold, prediction: Prediction, mode: Mode = "strict") -> int | None:
    """The first rank at which the prediction is right (1-based), or ``None`` if it never is."""
    if gold.is_nil or gold.has_several_parts or prediction.parts:
        return 1 if is_correct(gold, prediction, 1, mode) else None
    if mode == "strict" and len(prediction.concepts) > 1:
        return None
    for rank, identifier in enumerate(prediction.ranking, start=1):
        if identifier in gold.ids():
            return rank
    return None


@dataclass(frozen=True)
class NilScores:
    """Precision and recall of nil decisions (Miftahutdinov et al. §5.5.1)."""

    gold_nil: int
    predicted_nil: int
    true_nil: int

    @property
    def precision(self) -> float:
        return self.true_nil / self.predicted_nil if self.predicted_nil else 0.0

    @property
    def recall(self) -> float:
        return self.true_nil / self.gold_nil if self.gold_nil else 0.0


@dataclass(frozen=True)
class SetScores:
    """CBLUE's CHIP-CDN metric, for mentions that name several concepts: each mention's predicted concept set
    against its gold parts, micro-averaged. A predicted id is right when it answers a gold part not answered yet
    (any of the part's ``+`` alternatives); a nil mention adds nothing to either side."""

    true_positives: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        return self.true_positives / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


@dataclass(frozen=True)
class ImplicationScores:
    """Liang et al.'s view of multi-implication (Tables 2 and 8): the set metric on mentions naming one concept
    and on those naming several, how often the number of concepts claimed is right (1, 2 or 3+; nil mentions left
    out), and Acc@1 on the single-concept mentions."""

    single: SetScores
    several: SetScores
    count_right: int
    counted: int
    single_correct: int

    @property
    def count_accuracy(self) -> float:
        return self.count_right / self.counted if self.counted else 0.0

    @property
    def single_accuracy(self) -> float:
        return self.single_correct / self.single.gold if self.single.gold else 0.0


def implication_scores(golds: Sequence[Gold], predictions: Sequence[Prediction], classes: int = 3) -> ImplicationScores:
    pairs = [(g, p) for g, p in zip(golds, predictions, strict=True) if not g.is_nil]
    single = [(g, p) for g, p in pairs if len(g.parts) == 1]
    several = [(g, p) for g, p in pairs if len(g.parts) > 1]
    return ImplicationScores(
        single=set_scores(single),
        several=set_scores(several),
        count_right=sum(min(len(g.parts), classes) == min(len(set(p.concepts)), classes) for g, p in pairs),
        counted=len(pairs),
        single_correct=sum(is_correct(g, p, 1, "strict") for g, p in single),
    )


def set_scores(pairs: Sequence[tuple[Gold, Prediction]]) -> SetScores:
    return SetScores(
        true_positives=sum(set_matches(g, p) for g, p in pairs),
        predicted=sum(len(set(p.concepts)) for _, p in pairs),
        gold=sum(len(g.parts) for g, _ in pairs),
    )


def set_matches(gold: Gold, prediction: Prediction) -> int:
    """How many gold parts the predicted concepts answer, each part once."""
    open_parts = list(gold.parts)
    matched = 0
    for concept in dict.fromkeys(prediction.concepts):
        part = next((p for p in open_parts if concept in p), None)
        if part is not None:
            open_parts.remove(part)
            matched += 1
    return matched


@dataclass(frozen=True)
class Scores:
    """Accuracy at each k (fractions in [0, 1]), MRR and nil decisions over ``n`` mentions."""

    n: int
    accuracy: dict[int, float]
    mrr: float
    nil: NilScores
    mode: Mode = "strict"
    correct_at_1: tuple[bool, ...] = field(default=(), repr=False)  # per mention, for significance tests
    sets: SetScores = field(default_factory=lambda: SetScores(0, 0, 0))
    implication: ImplicationScores = field(
        default_factory=lambda: ImplicationScores(SetScores(0, 0, 0), SetScores(0, 0, 0), 0, 0, 0)
    )

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"n": self.n, "mode": self.mode}
        data.update({f"acc@{k}": value for k, value in self.accuracy.items()})
        data["mrr"] = self.mrr
        data["nil"] = {
            "gold": self.nil.gold_nil,
            "predicted": self.nil.predicted_nil,
            "precision": self.nil.precision,
            "recall": self.nil.recall,
        }
        data.update({"set_precision": self.sets.precision, "set_recall": self.sets.recall, "set_f1": self.sets.f1})
        implication = self.implication
        data.update(
            {
                "set_f1_single": implication.single.f1,
                "set_f1_several": implication.several.f1,
                "count_accuracy": implication.count_accuracy,
                "single_acc@1": implication.single_accuracy,
            }
        )
        return data


def score(
    golds: Sequence[Gold], predictions: Sequence[Prediction], ks: Sequence[int] = (1, 5), mode: Mode = "strict"
) -> Scores:
    if len(golds) != len(predictions):
        raise ValueError(f"{len(golds)} gold labels but {len(predictions)} predictions")
    n = len(golds)
    ks = sorted(set(ks) | {1})
    accuracy = {
        k: sum(is_correct(g, p, k, mode) for g, p in zip(golds, predictions, strict=True)) / n if n else 0.0 for k in ks
    }
    ranks = [rank_of_gold(g, p, mode) for g, p in zip(golds, predictions, strict=True)]
    mrr = sum(1 / rank for rank in ranks if rank) / n if n else 0.0
    nil = NilScores(
        gold_nil=sum(g.is_nil for g in golds),
        predicted_nil=sum(p.is_nil for p in predictions),
        true_nil=sum(g.is_nil and p.is_nil for g, p in zip(golds, predictions, strict=True)),
    )
    correct = tuple(is_correct(g, p, 1, mode) for g, p in zip(golds, predictions, strict=True))
    sets = set_scores(list(zip(golds, predictions, strict=True)))
    return Scores(
        n=n,
        accuracy=accuracy,
        mrr=mrr,
        nil=nil,
        mode=mode,
        correct_at_1=correct,
        sets=sets,
        implication=implication_scores(golds, predictions),
    )


def recall_at_k(golds: Sequence[Gold], rankings: Sequence[Sequence[str]], ks: Sequence[int]) -> dict[int, float]:
    """Share of in-KB single-part golds whose id is among a candidate stage's top k (what a reranker can reach)."""
    pairs = [(g, r) for g, r in zip(golds, rankings, strict=True) if len(g.parts) == 1]
    if not pairs:
        return dict.fromkeys(ks, 0.0)
    return {k: sum(_hit(ranking, gold.parts[0], k) for gold, ranking in pairs) / len(pairs) for k in ks}
