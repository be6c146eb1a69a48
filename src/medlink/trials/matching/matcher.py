"""Patient note in, ranked trials out, each with why.

Retrieval (TrialMatcher, Jin et al., shared/papers/003 §2.1.2): the note is encoded once by the patient encoder and
compared with every trial's description (trial encoder), inclusion and exclusion criteria (patient encoder); BM25 reads
the same note. The best ``candidates`` trials by either become candidates, whose evidence is fused (:mod:`.scoring`)
with the diseases the note names (:mod:`medlink.linking.mentions.scanner`) and its age and sex (:mod:`.notes`). A
cross-encoder (:mod:`.trial_reranker`) may then reorder the top ``rerank_top``, reading the note as
:mod:`.note_readings` says (long notes summarized to their findings, or in windows).

Each result says why: the inclusion criteria closest to the note, the exclusion criteria that name a disease of
the note, the age and sex verdicts, and the conditions shared with the note.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from medlink.linking.mentions.scanner import ConceptScanner, named
from medlink.trials.matching.criterion_evidence import (
    EXCLUSION,
    INCLUSION,
    CriterionFacts,
    CriterionVerdict,
    NoteFacts,
    criteria_signals,
    judge_criteria,
    read_criterion,
    read_note_facts,
)
from medlink.trials.matching.encoders import TrialEncoders
from medlink.trials.matching.note_readings import NoteReading
from medlink.trials.matching.notes import MAX_NOTE_CHARS, PatientNote, check_demographics, read_note
from medlink.trials.matching.scoring import (
    WEIGHTED,
    FusionWeights,
    Signals,
    fuse_signals,
    reranked_head,
    with_reranker,
)
from medlink.trials.matching.trial_index import VIEWS, IndexedTrial, TrialIndex
from medlink.trials.matching.trial_reranker import CrossEncoder, best_window_scores

DEFAULT_TOP = 10  # trials returned for a note unless asked otherwise
CRITERIA_TOP = 100  # over a whole index, only the first stage's best are checked criterion by criterion
CRITERIA_KEPT = 20_000  # trials whose criteria stay read (a bounded memory in a long-running service)


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
    criteria: tuple[CriterionVerdict, ...] = ()  # every criterion met, not met or unknown, with the note's words

    def to_dict(self) -> dict[str, Any]:
        return {
            "nct_id": self.nct_id,
            "title": self.title,
            "rank": self.rank,
            "score": round(self.score, 4),
            "signals": {k: round(v, 4) for k, v in self.signals.items()},
            "best_inclusion": [{"text": c.text, "score": round(c.score, 4)} for c in self.best_inclusion],
            "fired_exclusions": list(self.fired_exclusions),
            "age_ok": self.age_ok,
            "sex_ok": self.sex_ok,
            "shared_concepts": list(self.shared_concepts),
            "criteria": [verdict.to_dict() for verdict in self.criteria],
        }


@dataclass(frozen=True)
class ReadTrial:
    """A trial's criteria as read (what each asks) and its own concepts with what is above them."""

    inclusion: tuple[CriterionFacts, ...]
    exclusion: tuple[CriterionFacts, ...]
    own: frozenset[str]


@dataclass(frozen=True)
class Candidates:
    """A note's candidate trials and the evidence on each, before any ordering."""

    note: PatientNote
    concepts: tuple[str, ...]  # ids of the diseases the note names
    patient: np.ndarray  # the note's vector (patient encoder)
    rows: np.ndarray  # the trials' rows in the index
    trials: list[IndexedTrial]
    signals: Signals
    facts: NoteFacts  # what the note says, for the criteria
    reach: frozenset[str]  # the note's diseases and every concept above them

    @property
    def ids(self) -> list[str]:
        return [trial.nct_id for trial in self.trials]


@dataclass(frozen=True)
class MatchResult:
    note: PatientNote
    concepts: tuple[str, ...]  # names of the diseases found in the note
    trials: tuple[TrialMatch, ...]
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "age": self.note.age,
            "sex": self.note.sex,
            "concepts": list(self.concepts),
            "warnings": list(self.warnings),
            "trials": [t.to_dict() for t in self.trials],
        }


@dataclass
class TrialMatcher:
    """Ranks the trials of ``index`` for a note.

    candidates: trials kept from each of dense retrieval and BM25 before fusion (the rest cannot reach the top).
    rerank_top: how many of the fused ranking the reranker reads (it costs one cross-encoder pass per trial).
    explain_top: how many inclusion criteria each result shows.
    expand_query: add every name of the diseases the note names to its BM25 query (needs ``scanner``).
    fusion: how the first-stage signals are combined (``scoring.FUSIONS``).
    reading: how the reranker reads a note longer than its window.
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
    fusion: str = WEIGHTED
    reading: NoteReading = field(default_factory=NoteReading)
    made_by: Callable[[], TrialMatcher] | None = field(default=None, compare=False, repr=False)
    _read: dict[int, ReadTrial] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.index.check_encoders(self.encoders)

    def __reduce_ex__(self, protocol: Any) -> str | tuple[Any, ...]:
        # A matcher made from a trial index pickles as the call that made it (a service's worker processes load
        # the index themselves, mapped from the same files), not as its arrays and models.
        if self.made_by is not None:
            return (self.made_by, ())
        return super().__reduce_ex__(protocol)

    def match(self, note: str, top: int = DEFAULT_TOP) -> MatchResult:
        """The ``top`` trials of the whole index for ``note``."""
        return self._ranked(note, None, top)

    def rank(self, note: str, nct_ids: Sequence[str]) -> MatchResult:
        """``nct_ids`` (a judged pool) ranked for ``note``; ids missing from the index are an error."""
        return self._ranked(note, list(nct_ids), len(nct_ids))

    # --- scoring --------------------------------------------------------------------------------------------

    def evidence(self, text: str, pool: Sequence[str] | None = None, criteria: bool | None = None) -> Candidates:
        """The note's candidates (``pool``, or the best of the whole index by dense score and by BM25) with their
        signals. The criteria are checked for every candidate when ``criteria`` says so (default: when a weight
        uses them), else they count 0."""
        note = read_note(text)
        patient = self.encoders.encode_patients([note.text])[0]
        findings = self.scanner.findings(note.text) if self.scanner else ()  # scanned once: concepts and facts
        note_concepts = named(findings)
        bm25 = self.index.bm25.scores(self._lexical_query(note.text, note_concepts))
        if pool is None:  # every trial's cosines, to choose the candidates
            cosines = self._cosines(patient, slice(None))
            dense = cosines["D"] + self.weights.inclusion * cosines["I"] - self.weights.exclusion * cosines["E"]
            rows = np.union1d(_top(dense, self.candidates), _top(bm25, self.candidates))
            cosines = {view: values[rows] for view, values in cosines.items()}
        else:  # only the pool's rows are read (the vectors are memory-mapped float16)
            rows = np.asarray(self.index.rows(pool), dtype=np.int64)
            cosines = self._cosines(patient, rows)
        trials = [self.index.trials[row] for row in rows]
        facts = read_note_facts(note, self.scanner, findings)
        reach = self._reach(note_concepts)
        if criteria is None:
            criteria = bool(self.weights.criteria_met or self.weights.criteria_failed)
        signals = self._signals(cosines, bm25[rows], rows, trials, facts, reach, criteria)
        return Candidates(note, tuple(note_concepts), patient, rows, trials, signals, facts, reach)

    def relevance(self, found: Candidates, positions: Sequence[int], reading: NoteReading | None = None) -> np.ndarray:
        """The reranker's score of the candidates at ``positions``, reading the note as ``reading`` (default: the
        matcher's) says."""
        assert self.reranker is not None
        queries = (reading or self.reading).queries(found.note.text, self.scanner)
        documents = [found.trials[i].description or found.trials[i].title for i in positions]
        return best_window_scores(self.reranker, queries, documents)

    def _ranked(self, text: str, pool: list[str] | None, top: int) -> MatchResult:
        warnings = _note_warnings(text)
        checks = bool(self.weights.criteria_met or self.weights.criteria_failed)
        every_one = checks and pool is not None and len(pool) <= CRITERIA_TOP
        found = self.evidence(text, pool, criteria=every_one)
        scores = fuse_signals(found.signals, self.weights, self.fusion)
        if checks and not every_one:
            found, scores = self._checked_head(found, scores)
        head, tail = reranked_head(scores, found.ids, self.rerank_top)
        if self.reranker is not None and self.weights.rerank:
            scores = with_reranker(scores, head, tail, self.relevance(found, head), self.weights.rerank)
            head, tail = reranked_head(scores, found.ids, self.rerank_top)
        order = head + tail
        matches = tuple(self._explain(rank, found, i, float(scores[i])) for rank, i in enumerate(order[:top], start=1))
        return MatchResult(found.note, self._names(found.concepts), matches, warnings)

    def _checked_head(self, found: Candidates, scores: np.ndarray) -> tuple[Candidates, np.ndarray]:
        """The criteria checked for the first stage's best ``CRITERIA_TOP`` only (reading every criterion of
        thousands of candidates would take seconds); those stay above the rest."""
        head, tail = reranked_head(scores, found.ids, CRITERIA_TOP)
        met, failed = found.signals.criteria_met.copy(), found.signals.criteria_failed.copy()
        for i in head:
            trial = found.trials[i]
            if trial.inclusion or trial.exclusion:
                met[i], failed[i] = criteria_signals(*self._verdicts(found.facts, int(found.rows[i]), trial))
        found = replace(found, signals=replace(found.signals, criteria_met=met, criteria_failed=failed))
        checked = fuse_signals(found.signals, self.weights, self.fusion)
        if tail:
            checked[head] += max(0.0, float(checked[tail].max() - checked[head].min())) + 1.0
        return found, checked

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

    def _signals(
        self,
        cosines: dict[str, np.ndarray],
        bm25: np.ndarray,
        rows: np.ndarray,
        trials: list[IndexedTrial],
        facts: NoteFacts,
        reach: frozenset[str],
        criteria: bool,
    ) -> Signals:
        concepts, excluded, demographics, met, failed = (np.zeros(len(trials)) for _ in range(5))
        note = facts.note
        for i, trial in enumerate(trials):
            if reach:
                if trial.concepts:
                    concepts[i] = sum(c in reach for c in trial.concepts) / len(trial.concepts)
                excluded[i] = bool(self._excluding(reach, int(rows[i]), trial, trial.exclusion_concepts))
            demographics[i] = check_demographics(note, trial.minimum_age, trial.maximum_age, trial.sex).excluded
            if criteria and (trial.inclusion or trial.exclusion):
                met[i], failed[i] = criteria_signals(*self._verdicts(facts, int(rows[i]), trial))
        return Signals(cosines["D"], cosines["I"], cosines["E"], bm25, concepts, excluded, demographics, met, failed)

    def _read_trial(self, row: int, trial: IndexedTrial) -> ReadTrial:
        """What the trial's criteria ask and which concepts are its own, read once per trial and kept: neither
        depends on the note."""
        # One lookup, and the reading returned is this call's own: another thread's clear() between a test and a
        # second lookup made the second one fail (KeyError).
        known = self._read.get(row)
        if known is not None:
            return known
        if len(self._read) >= CRITERIA_KEPT:
            self._read.clear()  # start over: simpler than an eviction order
        own = set(trial.concepts)
        if self.scanner is not None:
            terminology = self.scanner.terminology
            for concept in trial.concepts:
                own.update(terminology.ancestors(concept) if concept in terminology else ())
        reading = ReadTrial(
            tuple(read_criterion(text, self.scanner) for text in trial.inclusion),
            tuple(read_criterion(text, self.scanner) for text in trial.exclusion),
            frozenset(own),
        )
        self._read[row] = reading
        return reading

    def _verdicts(
        self, facts: NoteFacts, row: int, trial: IndexedTrial
    ) -> tuple[tuple[CriterionVerdict, ...], tuple[CriterionVerdict, ...]]:
        """Each inclusion and exclusion criterion of ``trial`` checked against the note."""
        read = self._read_trial(row, trial)
        return (
            judge_criteria(INCLUSION, read.inclusion, facts),
            judge_criteria(EXCLUSION, read.exclusion, facts, read.own),
        )

    def _reach(self, concepts: Sequence[str]) -> frozenset[str]:
        """``concepts`` and every concept above them: a trial's concept is the note's when it is in there."""
        if self.scanner is None:
            return frozenset()
        terminology = self.scanner.terminology
        return frozenset(c for concept in concepts for c in (concept, *terminology.ancestors(concept)))

    # --- explanations ---------------------------------------------------------------------------------------

    def _explain(self, rank: int, found: Candidates, i: int, score: float) -> TrialMatch:
        trial, row, note = found.trials[i], int(found.rows[i]), found.note
        closest = self.index.criteria_vectors("I", row) @ found.patient if trial.inclusion else np.zeros(0)
        best = tuple(
            CriterionMatch(trial.inclusion[j], float(closest[j]))
            for j in np.argsort(-closest, kind="stable")[: self.explain_top]
        )
        inclusion, exclusion = self._verdicts(found.facts, row, trial)
        fired = tuple(
            c.text
            for c in self._read_trial(row, trial).exclusion
            if self._excluding(found.reach, row, trial, [f.concept_id for f in c.findings if not f.negated])
        )
        shared = self._names([c for c in trial.concepts if c in found.reach])
        verdict = check_demographics(note, trial.minimum_age, trial.maximum_age, trial.sex)
        values = {name: float(getattr(found.signals, name)[i]) for name in Signals.__dataclass_fields__}
        return TrialMatch(
            trial.nct_id,
            trial.title,
            rank,
            score,
            values,
            best,
            fired,
            verdict.age_ok,
            verdict.sex_ok,
            shared,
            inclusion + exclusion,
        )

    def _excluding(self, reach: frozenset[str], row: int, trial: IndexedTrial, named: Sequence[str]) -> tuple[str, ...]:
        """The diseases of the note (``reach``: with what is above them) among ``named`` (an exclusion's), leaving
        out the trial's own conditions and what is above them: "uncontrolled type 2 diabetes" in a diabetes trial
        qualifies its patients, it does not exclude diabetes."""
        own = self._read_trial(row, trial).own
        return tuple(c for c in named if c in reach and c not in own)

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
        warnings.append(
            "the note is mostly not in Latin script; medlink's trial encoders and BM25 read English, "
            "so these scores are unreliable"
        )
    return tuple(warnings)
