"""Patient note in, ranked trials out, each with why.

Retrieval (TrialMatcher, Jin et al., shared/papers/003 §2.1.2): the note is encoded once by the patient encoder and
compared with every trial's description (trial encoder), inclusion and exclusion criteria (patient encoder); BM25 reads
the same note. The best ``candidates`` trials by either become candidates, whose evidence is fused (:mod:`.scoring`)
with the diseases the note names (:mod:`medlink.linking.mentions.scanner`) and its age and sex (:mod:`.notes`). A
cross-encoder (:mod:`.trial_reranker`) may then reorder the top ``rerank_top``.

Each result says why: the inclusion criteria closest to the note, the exclusion criteria that name a disease of
the note, the age and sex verdicts, and the conditions shared with the note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medlink.linking.mentions.scanner import ConceptScanner
from medlink.trials.matching.encoders import TrialEncoders
from medlink.trials.matching.notes import MAX_NOTE_CHARS, PatientNote, check_demographics, read_note
from medlink.trials.matching.scoring import FusionWeights, Signals, fuse_signals, standardize
from medlink.trials.matching.trial_index import VIEWS, IndexedTrial, TrialIndex
from medlink.trials.matching.trial_reranker import CrossEncoder

DEFAULT_TOP = 10  # trials returned for a note unless asked otherwise

@dataclass(frozen=True)
class CriterionMatch:
    text: str
    score: float  # cosine to the note (patient encoder)


@dataclass(frozen=True)
class TrialMatch:
    """One ranked trial and the evidence behind its place."""

    nct_id: str
    title: str
    rank: int
    score: float
    signals: dict[str, float]
    best_inclusion: tuple[CriterionMatch, ...] = ()
    fired_exclusions: tuple[str, ...] = ()  # exclusion criteria naming a disease of the note
    age_ok: bool | None = None
    sex_ok: bool | None = None
    shared_concepts: tuple[str, ...] = ()  # names of the trial's conditions the note names

    def to_dict(self) -> dict[str, Any]:
        return {"nct_id": self.nct_id, "title": self.title, "rank": self.rank, "score": round(self.score, 4),
                "signals": {k: round(v, 4) for k, v in self.signals.items()},
                "best_inclusion": [{"text": c.text, "score": round(c.score, 4)} for c in self.best_inclusion],
                "fired_exclusions": list(self.fired_exclusions), "age_ok": self.age_ok, "sex_ok": self.sex_ok,
                "shared_concepts": list(self.shared_concepts)}  # fmt: skip


@dataclass(frozen=True)
class MatchResult:
    note: PatientNote
    concepts: tuple[str, ...]  # names of the diseases found in the note
    trials: tuple[TrialMatch, ...]
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"age": self.note.age, "sex": self.note.sex, "concepts": list(self.concepts),
                "warnings": list(self.warnings), "trials": [t.to_dict() for t in self.trials]}  # fmt: skip


@dataclass
class TrialMatcher:
    """Ranks the trials of ``index`` for a note.

    candidates: trials kept from each of dense retrieval and BM25 before fusion (the rest cannot reach the top).
    rerank_top: how many of the fused ranking the reranker reads (it costs one cross-encoder pass per trial).
    explain_top: how many inclusion criteria each result shows.
    expand_query: add every name of the diseases the note names to its BM25 query (needs ``scanner``).
    """

    index: TrialIndex
    encoders: TrialEncoders
    scanner: ConceptScanner | None = None
    weights: FusionWeights = field(default_factory=FusionWeights)
    reranker: CrossEncoder | None = None
    rerank_top: int = 20
    candidates: int = 1000
    explain_top: int = 3
    expand_query: bool = True

    def __post_init__(self) -> None:
        self.index.check_encoders(self.encoders)

    def match(self, note: str, top: int = DEFAULT_TOP) -> MatchResult:
        """The ``top`` trials of the whole index for ``note``."""
        return self._ranked(note, None, top)

    def rank(self, note: str, nct_ids: Sequence[str]) -> MatchResult:
        """``nct_ids`` (a judged pool) ranked for ``note``; ids missing from the index are an error."""
        return self._ranked(note, self.index.rows(nct_ids), len(nct_ids))

    # --- scoring --------------------------------------------------------------------------------------------

    def _ranked(self, text: str, pool: list[int] | None, top: int) -> MatchResult:
        note = read_note(text)
        warnings = _note_warnings(text)
        patient = self.encoders.encode_patients([note.text])[0]
        note_concepts = self.scanner.scan(note.text) if self.scanner else ()
        bm25 = self.index.bm25.scores(self._lexical_query(note.text, note_concepts))
        if pool is None:  # every trial's cosines, to choose the candidates
            cosines = self._cosines(patient, slice(None))
            dense = cosines["D"] + self.weights.inclusion * cosines["I"] - self.weights.exclusion * cosines["E"]
            rows = np.union1d(_top(dense, self.candidates), _top(bm25, self.candidates))
            cosines = {view: values[rows] for view, values in cosines.items()}
        else:  # only the pool's rows are read (the vectors are memory-mapped float16)
            rows = np.asarray(pool, dtype=np.int64)
            cosines = self._cosines(patient, rows)
        bm25 = bm25[rows]
        trials = [self.index.trials[row] for row in rows]
        signals = self._signals(cosines, bm25, trials, note, note_concepts)
        scores = fuse_signals(signals, self.weights)
        order = sorted(range(len(rows)), key=lambda i: (-scores[i], trials[i].nct_id))
        order, scores = self._rerank(note.text, trials, order, scores)
        matches = tuple(self._explain(rank, trials[i], int(rows[i]), float(scores[i]), signals, i, patient, note,
                                      note_concepts) for rank, i in enumerate(order[:top], start=1))  # fmt: skip
        names = self._names(note_concepts)
        return MatchResult(note, names, matches, warnings)

    def _lexical_query(self, text: str, note_concepts: Sequence[str]) -> str:
        """The note, then every name of the diseases it names (MeSH entry terms as query expansion): BM25 then finds
        the trial that writes "heart attack" for the note's "myocardial infarction". On the dev collections NDCG@10
        0.480 → 0.528 (SIGIR 2016 dev) and 0.535 → 0.540 (TREC 2022 pool); docs/trials.md."""
        if not self.expand_query or self.scanner is None or not note_concepts:
            return text
        terminology = self.scanner.terminology
        return " ".join([text, *(name.text for concept in note_concepts for name in terminology.names_of(concept))])

    def _cosines(self, patient: np.ndarray, rows: slice | np.ndarray) -> dict[str, np.ndarray]:
        """cos(note, D), cos(note, I), cos(note, E) of the trials at ``rows``."""
        return {view: np.asarray(self.index.vectors[view][rows], dtype=np.float32) @ patient for view in VIEWS}

    def _signals(self, cosines: dict[str, np.ndarray], bm25: np.ndarray, trials: list[IndexedTrial],
                 note: PatientNote, note_concepts: Sequence[str]) -> Signals:  # fmt: skip
        concepts, excluded, demographics = (np.zeros(len(trials)) for _ in range(3))
        for i, trial in enumerate(trials):
            if self.scanner and note_concepts:
                if trial.concepts:
                    concepts[i] = len(self.scanner.related(note_concepts, trial.concepts)) / len(trial.concepts)
                excluded[i] = bool(self._excluding(note_concepts, trial, trial.exclusion_concepts))
            demographics[i] = check_demographics(note, trial.minimum_age, trial.maximum_age, trial.sex).excluded
        return Signals(cosines["D"], cosines["I"], cosines["E"], bm25, concepts, excluded, demographics)

    def _rerank(self, note: str, trials: list[IndexedTrial], order: list[int], scores: np.ndarray
                ) -> tuple[list[int], np.ndarray]:  # fmt: skip
        """The top ``rerank_top`` reordered by fused score + weight × standardized cross-encoder score; the rest
        keep their order below them."""
        if self.reranker is None or not self.weights.rerank:
            return order, scores
        head, tail = order[: self.rerank_top], order[self.rerank_top :]
        relevance = self.reranker.score(note, [trials[i].description or trials[i].title for i in head])
        scores = scores.astype(np.float64).copy()
        scores[head] += self.weights.rerank * standardize(relevance)
        if tail:  # the reranked head stays above the rest
            floor = scores[head].min()
            scores[tail] = np.minimum(scores[tail], floor - 1e-6)
        return sorted(head, key=lambda i: (-scores[i], trials[i].nct_id)) + tail, scores

    # --- explanations ---------------------------------------------------------------------------------------

    def _explain(self, rank: int, trial: IndexedTrial, row: int, score: float, signals: Signals, i: int,
                 patient: np.ndarray, note: PatientNote, note_concepts: Sequence[str]) -> TrialMatch:  # fmt: skip
        closest = self.index.criteria_vectors("I", row) @ patient if trial.inclusion else np.zeros(0)
        best = tuple(CriterionMatch(trial.inclusion[j], float(closest[j]))
                     for j in np.argsort(-closest, kind="stable")[: self.explain_top])  # fmt: skip
        fired: tuple[str, ...] = ()
        shared: tuple[str, ...] = ()
        if self.scanner and note_concepts:
            fired = tuple(c for c in trial.exclusion if self._excluding(note_concepts, trial, self.scanner.scan(c)))
            shared = self._names(self.scanner.related(note_concepts, trial.concepts))
        verdict = check_demographics(note, trial.minimum_age, trial.maximum_age, trial.sex)
        values = {name: float(getattr(signals, name)[i]) for name in Signals.__dataclass_fields__}
        return TrialMatch(trial.nct_id, trial.title, rank, score, values, best, fired, verdict.age_ok,
                          verdict.sex_ok, shared)  # fmt: skip

    def _excluding(self, note_concepts: Sequence[str], trial: IndexedTrial, named: Sequence[str]) -> tuple[str, ...]:
        """The diseases of the note among ``named`` (an exclusion's), leaving out the trial's own conditions and
        what is above them: "uncontrolled type 2 diabetes" in a diabetes trial qualifies its patients, it does not
        exclude diabetes."""
        assert self.scanner is not None
        own = set(trial.concepts)
        for concept in trial.concepts:
            own.update(self.scanner.terminology.ancestors(concept) if concept in self.scanner.terminology else ())
        return self.scanner.related(note_concepts, [c for c in named if c not in own])

    def _names(self, concepts: Sequence[str]) -> tuple[str, ...]:
        if self.scanner is None:
            return tuple(concepts)
        return tuple(self.scanner.terminology.concept_preferred_name(c) for c in concepts)


def _top(values: np.ndarray, k: int) -> np.ndarray:
    if len(values) <= k:
        return np.arange(len(values))
    return np.argpartition(-values, k)[:k]


def _note_warnings(text: str) -> tuple[str, ...]:
    warnings = []
    stripped = " ".join(text.split()) if isinstance(text, str) else ""
    if len(stripped) > MAX_NOTE_CHARS:
        warnings.append(f"the note has {len(stripped):,} characters; only the first {MAX_NOTE_CHARS:,} were read")
    letters = [c for c in stripped if c.isalpha()]
    if letters and sum(c.isascii() for c in letters) / len(letters) < 0.5:
        warnings.append("the note is mostly not in Latin script; medlink's trial encoders and BM25 read English, "
                        "so these scores are unreliable")  # fmt: skip
    return tuple(warnings)
