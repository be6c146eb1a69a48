"""Fusing the evidence a note has about each candidate trial into one score.

TrialMatcher's score (Jin et al., shared/papers/003, eq. 5) aggregates three cosines, s = Aggregate(s_PD, s_PI, −s_PE);
here the aggregate is a weighted sum, and BM25, concept overlap and the demographic checks join it. Each retrieval
signal is standardized over the candidates of the note (z-scores), so that weights mean the same whatever the scale of
BM25 or of an encoder's cosines; a signal that is constant over the candidates (no trial has exclusion criteria)
contributes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True)
class FusionWeights:
    """How much each signal counts. The defaults were chosen on the SIGIR 2016 dev patients (docs/trials.md).

    description, inclusion, exclusion: s_PD, s_PI and −s_PE of eq. 5.
    bm25: lexical match of the note against the trial text.
    concepts: the share of the trial's conditions the note names (or names a narrower concept of).
    exclusion_concepts: a disease the note names appears in the trial's exclusion criteria.
    demographics: the note's age or sex is outside the trial's limits.
    rerank: the cross-encoder's score over the top candidates, when a reranker is used.
    """

    description: float = 1.0
    inclusion: float = 0.5
    exclusion: float = 0.25
    bm25: float = 0.5
    concepts: float = 0.5
    exclusion_concepts: float = 0.5
    demographics: float = 3.0
    rerank: float = 1.0

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


def standardize(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    spread = values.std()
    return np.zeros_like(values) if spread < 1e-9 else (values - values.mean()) / spread


def fuse_signals(signals: Signals, weights: FusionWeights) -> np.ndarray:
    return (weights.description * standardize(signals.description)
            + weights.inclusion * standardize(signals.inclusion)
            - weights.exclusion * standardize(signals.exclusion)
            + weights.bm25 * standardize(signals.bm25)
            + weights.concepts * signals.concepts
            - weights.exclusion_concepts * signals.exclusion_concepts
            - weights.demographics * signals.demographics)  # fmt: skip
