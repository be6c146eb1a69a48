"""The numbers of a set ranker (``set_ranker.py``): the pair and set models (logistic regressions over hinge
bases, stored as plain numbers), the set features, and the rule that claims a mention's set of concepts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medlink.index import IndexEntry
from medlink.linking.results import Candidate
from medlink.linking.sets.pair_features import CandidatePairs, characters
from medlink.linking.sets.pair_rescorer import PairRescorer

SET_FEATURES = (
    "probability",
    "rank",
    "relative_probability",
    "best_probability",
    "above_half",
    "above_quarter",
    "new_characters",
    "overlap_with_best",
    "second_best_probability",
)
KEPT_CANDIDATES = 10  # candidates a result lists besides the claimed ones


@dataclass(frozen=True)
class HingeLogistic:
    """Logistic regression over each feature and its hinges ``max(0, x − knot)`` at quantile knots: a piecewise
    linear response per feature, stored as plain numbers (no pickled estimator)."""

    knots: tuple[tuple[float, ...], ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float

    def expand(self, features: np.ndarray) -> np.ndarray:
        return hinge_basis(features, self.knots)

    def probability(self, features: np.ndarray) -> np.ndarray:
        if features.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        standard = (self.expand(features) - np.asarray(self.mean)) / np.asarray(self.scale)
        return 1.0 / (1.0 + np.exp(-(standard @ np.asarray(self.weights) + self.bias)))

    @classmethod
    def from_dict(cls, data: dict) -> HingeLogistic:
        return cls(
            tuple(tuple(k) for k in data["knots"]),
            tuple(data["mean"]),
            tuple(data["scale"]),
            tuple(data["weights"]),
            float(data["bias"]),
        )


@dataclass(frozen=True)
class RankerModel:
    """The pair model, and the set model that rescores each candidate from :func:`set_features`."""

    pairs: HingeLogistic
    sets: HingeLogistic

    def probabilities(self, pairs: CandidatePairs) -> list[np.ndarray]:
        """Per mention, its candidates' probabilities; each model scores the whole batch at once."""
        first = _per_mention(self.pairs.probability(_stacked(pairs.features)), pairs.features)
        rows = [set_features(entries, chances) for entries, chances in zip(pairs.entries, first, strict=True)]
        return _per_mention(self.sets.probability(_stacked(rows)), rows)

    @classmethod
    def from_dict(cls, data: dict) -> RankerModel:
        return cls(HingeLogistic.from_dict(data["pairs"]), HingeLogistic.from_dict(data["sets"]))


def _stacked(blocks: Sequence[np.ndarray]) -> np.ndarray:
    return np.vstack(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)


def _per_mention(values: np.ndarray, blocks: Sequence[np.ndarray]) -> list[np.ndarray]:
    return np.split(values, np.cumsum([len(block) for block in blocks])[:-1]) if blocks else []


def set_features(entries: Sequence[IndexEntry], probabilities: np.ndarray, likely: float = 0.2) -> np.ndarray:
    """Per candidate, :data:`SET_FEATURES`: where its pair probability stands among the mention's candidates, and
    how much of its name is new beside the likely (> ``likely``) candidates ranked above it — a mention naming two
    concepts usually names them with different characters."""
    if len(entries) == 0:
        return np.zeros((0, len(SET_FEATURES)), dtype=np.float32)
    order = by_probability(entries, probabilities)
    best = float(probabilities[order[0]])
    runner_up = float(probabilities[order[1]]) if len(order) > 1 else 0.0
    above_half, above_quarter = int((probabilities > 0.5).sum()), int((probabilities > 0.25).sum())
    best_characters = characters(entries[order[0]].key)
    covered: set[str] = set()
    rows = np.zeros((len(entries), len(SET_FEATURES)), dtype=np.float32)
    for rank, i in enumerate(order):
        own = characters(entries[i].key)
        new = len(own - covered) / max(1, len(own))
        overlap = len(own & best_characters) / max(1, len(own | best_characters)) if rank else 0.0
        rows[i] = (
            probabilities[i],
            rank,
            probabilities[i] / best if best > 0 else 0.0,
            best,
            above_half,
            above_quarter,
            new,
            overlap,
            runner_up,
        )
        if probabilities[i] > likely:
            covered |= own
    return rows


def by_probability(entries: Sequence[IndexEntry], probabilities: np.ndarray) -> list[int]:
    """Candidate positions, most probable first; ties by name, so the order never varies."""
    return sorted(range(len(entries)), key=lambda i: (-probabilities[i], entries[i].key))


def hinge_basis(features: np.ndarray, knots: Sequence[Sequence[float]]) -> np.ndarray:
    hinges = [np.maximum(0.0, features[:, [j]] - np.asarray(k)[None, :]) for j, k in enumerate(knots) if len(k)]
    return np.hstack([features, *hinges]).astype(np.float64)


@dataclass(frozen=True)
class RankedSet:
    """A mention's candidates with their probabilities (best first) and the ones it claims."""

    candidates: tuple[Candidate, ...]
    claimed: tuple[str, ...]
    rescored: bool = False  # the pair rescorer read its best candidates (their rerank_score is the fused one)


def rank_pairs(pairs: CandidatePairs, model: RankerModel, threshold: float) -> list[RankedSet]:
    return [
        claim(entries, chances, threshold)
        for entries, chances in zip(pairs.entries, model.probabilities(pairs), strict=True)
    ]


def claimed_concepts(scored: Sequence[tuple[str, float]], threshold: float) -> tuple[str, ...]:
    """The rule :func:`claim` applies, over (concept, score) pairs best first: the best, then every one above
    ``threshold``, each concept once (the fitting of a rescorer scores out-of-fold candidates with it)."""
    claimed = [concept for rank, (concept, score) in enumerate(scored) if rank == 0 or score > threshold]
    return tuple(dict.fromkeys(claimed))


def claim(
    entries: Sequence[IndexEntry], probabilities: np.ndarray, threshold: float, fused: dict[int, float] | None = None
) -> RankedSet:
    """A mention's candidates by probability; claimed: those above ``threshold`` (at least the best), one concept
    per name. With ``fused`` (the rescorer's probabilities of the candidates it read, by position), those come
    first by fused probability, and only they are claimed, against ``threshold`` on the fused probability."""
    order = by_probability(entries, probabilities)
    deciding: dict[int, float] | np.ndarray = probabilities
    if fused:
        order = sorted(fused, key=lambda i: (-fused[i], entries[i].key)) + [i for i in order if i not in fused]
        deciding = fused
    candidates, claimed = [], []
    for rank, i in enumerate(order):
        concept = entries[i].concepts[0]
        readable = not fused or i in fused
        above = rank == 0 or (readable and deciding[i] > threshold)
        if rank < KEPT_CANDIDATES or above:
            rescored = round(fused[i], 6) if fused and i in fused else None
            candidates.append(Candidate(concept, entries[i].text, float(probabilities[i]), rescored))
        if above and concept not in claimed:
            claimed.append(concept)
        elif rank >= KEPT_CANDIDATES:
            break  # the order is by the deciding probability: nothing further is above the threshold
    return RankedSet(tuple(candidates), tuple(claimed), bool(fused))


def rescore(
    texts: Sequence[str],
    entries: Sequence[Sequence[IndexEntry]],
    probabilities: Sequence[np.ndarray],
    rescorer: PairRescorer,
) -> list[RankedSet]:
    """Each mention's best candidates read by the pair rescorer, and the set claimed on the fused probability."""
    pairs = list(zip(entries, probabilities, strict=True))
    read = [by_probability(found, chances)[: rescorer.card.depth] for found, chances in pairs]
    names = [[found[i].text for i in best] for (found, _), best in zip(pairs, read, strict=True)]
    logits = rescorer.read_candidates(texts, names)
    out = []
    for found, chances, best, pair in zip(entries, probabilities, read, logits, strict=True):
        fused = rescorer.fuse(chances[best], pair) if best else np.zeros(0)
        out.append(claim(found, chances, rescorer.card.threshold, dict(zip(best, fused.tolist(), strict=True))))
    return out
