"""Fusing the evidence a note has about each candidate trial into one score.

TrialMatcher's score (Jin et al., shared/papers/003, eq. 5) aggregates three cosines, s = Aggregate(s_PD, s_PI, −s_PE);
here the aggregate is a weighted sum, and BM25, concept overlap and the demographic checks join it. Each retrieval
signal is standardized over the candidates of the note (z-scores), so that weights mean the same whatever the scale of
BM25 or of an encoder's cosines; a signal that is constant over the candidates (no trial has exclusion criteria)
contributes nothing.

Two fusions (``FUSIONS``): ``weighted`` is that weighted sum of z-scores; ``rrf`` is reciprocal-rank fusion of the
retrieval signals (each ranked list counts 1 / (k + rank), no weights to tune), with the concept, exclusion and
demographic checks applied as in the weighted sum. A reranker's score over the top candidates is then added to
the first stage's (:func:`with_reranker`), both standardized over that top so that one weight means the same for
either fusion.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True)
class FusionWeights:
    """How much each signal counts. The defaults were chosen on the SIGIR 2016 dev patients (docs/trials.md); the
    criteria checks' by the selection protocol over four collections (``medlink trials select``, issue 39).

    description, inclusion, exclusion: s_PD, s_PI and −s_PE of eq. 5.
    bm25: lexical match of the note against the trial text.
    concepts: the share of the trial's conditions the note names (or names a narrower concept of).
    exclusion_concepts: a disease the note names appears in the trial's exclusion criteria.
    demographics: the note's age or sex is outside the trial's limits.
    rerank: the cross-encoder's score over the top candidates, when a reranker is used.
    criteria_met: the share of the trial's inclusion criteria the note meets (:mod:`.criterion_evidence`).
    criteria_failed: an inclusion criterion the note does not meet, or an exclusion criterion it meets.
    """

    description: float = 1.0
    inclusion: float = 0.5
    exclusion: float = 0.25
    bm25: float = 0.5
    concepts: float = 0.5
    exclusion_concepts: float = 0.5
    demographics: float = 3.0
    rerank: float = 1.0
    criteria_met: float = 0.5
    criteria_failed: float = 0.5

    @classmethod
    def parse(cls, text: str) -> FusionWeights:
        """``"bm25=0.3,rerank=2"`` → the defaults with those two changed."""
        known = {f.name for f in fields(cls)}
        given: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, _, value = part.partition("=")
            if name not in known:
                raise ValueError(f"unknown weight {name!r}; known: {', '.join(sorted(known))}")
            try:
                given[name] = float(value)
            except ValueError:
                raise ValueError(f"weight {name!r} needs a number, got {value!r}") from None
        return cls(**given)


@dataclass(frozen=True)
class Signals:
    """Per candidate trial, aligned arrays of the raw evidence."""

    description: np.ndarray  # cos(patient, D)
    inclusion: np.ndarray  # cos(patient, I); 0 where the trial has no inclusion criteria
    exclusion: np.ndarray  # cos(patient, E); 0 where it has no exclusion criteria
    bm25: np.ndarray
    concepts: np.ndarray  # share of the trial's conditions the note names, in [0, 1]
    exclusion_concepts: np.ndarray  # 1 where a disease of the note is in the trial's exclusions
    demographics: np.ndarray  # 1 where age or sex rules the patient out
    criteria_met: np.ndarray  # share of the inclusion criteria met, in [0, 1]
    criteria_failed: np.ndarray  # 1 where a criterion rules the patient out


def standardize(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    spread = values.std()
    return np.zeros_like(values) if spread < 1e-9 else (values - values.mean()) / spread


WEIGHTED, RRF = "weighted", "rrf"
FUSIONS = (WEIGHTED, RRF)
RRF_K = 60  # Cormack et al.'s constant: the top ranks of every list count, none dominates


def fuse_signals(signals: Signals, weights: FusionWeights, fusion: str = WEIGHTED) -> np.ndarray:
    """The first-stage score of every candidate."""
    if fusion == RRF:
        return reciprocal_rank_fusion(signals, weights)
    if fusion != WEIGHTED:
        raise ValueError(f"unknown fusion {fusion!r}; known: {', '.join(FUSIONS)}")
    return (
        weights.description * standardize(signals.description)
        + weights.inclusion * standardize(signals.inclusion)
        - weights.exclusion * standardize(signals.exclusion)
        + weights.bm25 * standardize(signals.bm25)
        + weights.concepts * signals.concepts
        - weights.exclusion_concepts * signals.exclusion_concepts
        - weights.demographics * signals.demographics
        + weights.criteria_met * signals.criteria_met
        - weights.criteria_failed * signals.criteria_failed
    )


def reciprocal_rank_fusion(signals: Signals, weights: FusionWeights, k: int = RRF_K) -> np.ndarray:
    """Σ 1 / (k + rank) over the note's cosines with D and I, its distance from E, BM25 and concept overlap; a
    disease the trial excludes costs one list's first place, and a demographic exclusion puts the trial last. The
    criteria checks count as the weighted sum's do, in units of one list's first place."""
    lists = (signals.description, signals.inclusion, -signals.exclusion, signals.bm25, signals.concepts)
    fused = sum((1.0 / (k + _ranks(values)) for values in lists), np.zeros(len(signals.description)))
    first = 1.0 / (k + 1)
    fused = fused - first * (
        signals.exclusion_concepts
        - weights.criteria_met * signals.criteria_met
        + weights.criteria_failed * signals.criteria_failed
    )
    return fused - len(lists) * signals.demographics.astype(np.float64)  # below every trial that is not ruled out


def _ranks(values: np.ndarray) -> np.ndarray:
    """1 for the highest value; ties share their average rank, so a constant signal favours no one."""
    _, inverse, counts = np.unique(-np.asarray(values, dtype=np.float64), return_inverse=True, return_counts=True)
    last = np.cumsum(counts)
    return ((last - counts + 1 + last) / 2.0)[inverse]


def reranked_head(scores: np.ndarray, ids: list[str], top: int) -> tuple[list[int], list[int]]:
    """The candidates in first-stage order (ties by id), split into the ``top`` the reranker reads and the rest."""
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
    return order[:top], order[top:]


def with_reranker(
    scores: np.ndarray, head: list[int], tail: list[int], relevance: np.ndarray, weight: float
) -> np.ndarray:
    """Scores where the head is ordered by z(first stage) + weight · z(reranker) over the head, and stays above
    the tail, which keeps its order."""
    scores = np.asarray(scores, dtype=np.float64).copy()
    if not head:
        return scores
    combined = standardize(scores[head]) + weight * standardize(relevance)
    if tail:
        floor = scores[tail].max()
        combined = combined - combined.min() + floor + 1.0
    scores[head] = combined
    return scores
