"""Choosing the matcher's ranking setting by cross-validation over every judged collection at hand (issue 39).

A setting (:class:`RankingSetting`) is a fusion of the first-stage signals, with or without the criteria checks
(:mod:`.criterion_evidence`), and optionally a reranker reading the note one way over the top ``rerank_top`` trials
at one weight. Every setting is scored on every patient once, from
evidence gathered once (:mod:`.pool_evidence`). The choice is made per collection (each counts the same, however
many patients it has) by one of two objectives: ``worst`` (the default) takes the setting whose smallest change of
NDCG@10 from today's default over the collections is largest, then the best mean among those — a setting that wins
on average by losing one collection is not robust, and today's default (a change of 0 everywhere) stays unless
something beats it on every collection; ``mean`` takes the best mean. The choice is judged on what it did not see:

- **by collection**: each collection held out in turn, the setting chosen on the others scored on it;
- **by topic**: the patients of all collections in ``folds`` folds (a hash of collection and patient id), the
  setting chosen without a fold scored on that fold; a collection's figure gathers its patients' held-out scores.

The setting chosen on everything is what the defaults take; the held-out figures say what to expect of it.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import product

import numpy as np

from medlink.trials.matching.metrics import per_patient
from medlink.trials.matching.pool_evidence import PoolEvidence
from medlink.trials.matching.scoring import (
    FUSIONS,
    WEIGHTED,
    FusionWeights,
    fuse_signals,
    reranked_head,
    with_reranker,
)

WORST, MEAN = "worst", "mean"
OBJECTIVES = (WORST, MEAN)
RERANK_TOPS = (10, 20, 30)  # 30 pairs at 256 tokens is about what 1 s per note allows on 2 cores
RERANK_WEIGHTS = (0.25, 0.5, 1.0, 2.0)
CRITERIA_WEIGHTS = (0.0, 0.5)  # off, or as much as the concept overlap counts


@dataclass(frozen=True)
class RankingSetting:
    """fusion: of the first-stage signals. criteria: the weight of both criteria checks. reading: how the reranker
    reads the note (``None``: no reranker)."""

    fusion: str = WEIGHTED
    criteria: float = FusionWeights.criteria_met  # today's default
    reading: str | None = None
    rerank_top: int = 0
    rerank_weight: float = 0.0

    @property
    def label(self) -> str:
        label = self.fusion + (f" + criteria × {self.criteria:g}" if self.criteria else " without criteria")
        if self.reading is None:
            return label
        return f"{label} + rerank {self.reading} top {self.rerank_top} × {self.rerank_weight:g}"

    def weights(self, base: FusionWeights) -> FusionWeights:
        return replace(
            base,
            criteria_met=self.criteria,
            criteria_failed=self.criteria,
            rerank=self.rerank_weight if self.reading else base.rerank,
        )

    def options(self, reranker: str) -> str:
        """The command-line options that rank this way."""
        weights = [f"criteria_met={self.criteria:g}", f"criteria_failed={self.criteria:g}"]
        options = f"--fusion {self.fusion}"
        if self.reading is not None:
            options += f" --reranker {reranker} --reading {self.reading} --rerank-top {self.rerank_top}"
            weights.append(f"rerank={self.rerank_weight:g}")
        return options + (f" --weights {','.join(weights)}" if weights else "")


def settings_grid(
    readings: Sequence[str],
    tops: Sequence[int] = RERANK_TOPS,
    weights: Sequence[float] = RERANK_WEIGHTS,
    criteria: Sequence[float] = CRITERIA_WEIGHTS,
) -> list[RankingSetting]:
    grid = [RankingSetting(fusion, checks) for fusion, checks in product(FUSIONS, criteria)]
    reranked = product(FUSIONS, criteria, readings, tops, weights)
    grid += [RankingSetting(fusion, checks, reading, top, weight) for fusion, checks, reading, top, weight in reranked]
    return grid


def ranked_pool(evidence: PoolEvidence, setting: RankingSetting, weights: FusionWeights) -> dict[str, float]:
    """The pool ranked by ``setting``, as a run (trial → a score that falls with the rank)."""
    ids = list(evidence.trials)
    scores = fuse_signals(evidence.signals, setting.weights(weights), setting.fusion)
    head, tail = reranked_head(scores, ids, setting.rerank_top)
    if setting.reading is not None and setting.rerank_weight:
        relevance = evidence.relevance[setting.reading][head]
        scores = with_reranker(scores, head, tail, relevance, setting.rerank_weight)
        head, tail = reranked_head(scores, ids, setting.rerank_top)
    return {ids[i]: float(len(ids) - rank) for rank, i in enumerate(head + tail)}


@dataclass(frozen=True)
class HeldOut:
    """One collection's NDCG@10: today's default, the settings chosen without it (by collection, by topic), and
    the setting chosen on everything."""

    collection: str
    patients: int
    today: float
    by_collection: float
    by_collection_setting: str
    by_topic: float
    chosen: float


@dataclass(frozen=True)
class Selection:
    chosen: RankingSetting
    today: RankingSetting
    held_out: tuple[HeldOut, ...]
    leaderboard: tuple[tuple[str, float, dict[str, float]], ...]  # setting, macro NDCG@10, per collection
    folds: int
    objective: str


def select_setting(
    evidence: Sequence[PoolEvidence],
    settings: Sequence[RankingSetting],
    today: RankingSetting = RankingSetting(),
    weights: FusionWeights | None = None,
    folds: int = 5,
    objective: str = WORST,
) -> Selection:
    """Score every setting on every patient, choose by ``objective`` and report the held-out figures."""
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; known: {', '.join(OBJECTIVES)}")
    weights = weights or FusionWeights()
    settings = list(dict.fromkeys([today, *settings]))
    patients = [(e.collection, e.patient) for e in evidence]
    qrels = {f"{c}/{p}": e.qrels for (c, p), e in zip(patients, evidence, strict=True)}
    table = np.zeros((len(settings), len(evidence)))  # NDCG@10 per setting and patient
    for row, setting in enumerate(settings):
        run = {f"{e.collection}/{e.patient}": ranked_pool(e, setting, weights) for e in evidence}
        values = per_patient(run, qrels)
        table[row] = [values[f"{c}/{p}"] for c, p in patients]
    collections = sorted({c for c, _ in patients})
    members = {c: np.array([pc == c for pc, _ in patients]) for c in collections}
    fold = np.array([zlib.crc32(f"{c}/{p}".encode()) % folds for c, p in patients])

    def best(mask: np.ndarray) -> int:
        """The setting the objective prefers on the patients in ``mask``; the first of equals, so today's default
        (row 0) wins ties."""
        means = np.array([table[:, members[c] & mask].mean(axis=1) for c in collections if (members[c] & mask).any()])
        mean = means.mean(axis=0)
        if objective == MEAN:
            return int(np.argmax(mean))
        worst = (means - means[:, :1]).min(axis=0)  # each setting's smallest change from today's, over collections
        robust = np.flatnonzero(worst >= worst.max() - 1e-9)
        return int(robust[np.argmax(mean[robust])])

    everyone = np.ones(len(patients), dtype=bool)
    chosen = best(everyone)
    by_topic = np.zeros(len(patients))
    for k in range(folds):
        held = fold == k
        if held.any():
            by_topic[held] = table[best(~held), held]
    held_out = []
    for c in collections:
        without = best(~members[c])
        held_out.append(
            HeldOut(
                c,
                int(members[c].sum()),
                _mean(table[0, members[c]]),
                _mean(table[without, members[c]]),
                settings[without].label,
                _mean(by_topic[members[c]]),
                _mean(table[chosen, members[c]]),
            )
        )
    per_collection = {c: table[:, members[c]].mean(axis=1) for c in collections}
    macro = np.mean([per_collection[c] for c in collections], axis=0)
    leaderboard = tuple(
        (settings[i].label, round(float(macro[i]), 4), {c: round(float(per_collection[c][i]), 4) for c in collections})
        for i in np.argsort(-macro, kind="stable")
    )
    return Selection(settings[chosen], today, tuple(held_out), leaderboard, folds, objective)


def _mean(values: np.ndarray) -> float:
    return round(float(values.mean()), 4) if len(values) else 0.0
