"""Trial records in, linked conditions and interventions out: one :class:`NormalizedTrial` per record.

Nothing here links text itself: conditions go to a conditions linker (diseases), drug-like interventions (see
:data:`~medlink.trials.normalization.interventions.DRUG_TYPES`) to an interventions linker (drugs and chemicals), other
interventions (procedures, devices, behaviours, radiation) to the conditions linker's vocabulary or nil. Records
are handled in batches so each linker sees every string of the batch at once: repeats across records are linked
once, and dense sieves encode in full batches.

A condition is linked with the record's title and summary as its document, so a short form the summary defines
("congenital adrenal hyperplasia (CAH)") is expanded. Then it is refined: the narrower concepts of the linked one that
the title or summary name exactly are added ("Leukemia" in a trial of "hairy cell leukemia"), as NLM's indexers do. An
intervention is split and cleaned first (:mod:`medlink.trials.normalization.interventions`); each drug part tries its
spellings in order and keeps the first exact match, else the best-scoring retrieval. A retrieval scoring under its
field's nil threshold is nil, with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any

from medlink.linking import Linker
from medlink.linking.mentions.branches import BranchScope, has_tree_numbers
from medlink.linking.mentions.scanner import ConceptScanner
from medlink.linking.results import LinkResult, Mention, Stage
from medlink.options import setting
from medlink.trials.normalization.conditions import condition_spellings
from medlink.trials.normalization.interventions import DRUG_TYPES, PreparedIntervention, prepare_intervention
from medlink.trials.records import Intervention, TrialRecord

CONDITION, DRUG, OTHER = "condition", "drug", "other"
REFINED = "refined"  # the stage of a condition whose narrower concepts named in the title or summary were added


@dataclass(frozen=True)
class NilThresholds:
    """Retrieval scores under which a string is nil, per field; exact matches are never nil.

    The defaults were chosen with DILBERT's calibration strategies on the train split of the 5,097 shared records
    with the embedded defaults (descriptors for conditions, descriptors + supplementary records for drugs;
    ``medlink trials eval-normalization --split train --calibrate``; docs/trials.md): ``max-tp`` for conditions,
    ``weighted`` for drugs, ``min-fp`` for other interventions, whose retrievals are rarely right (a procedure is
    seldom named like a MeSH concept), so that only near-exact matches link.
    """

    condition: float | None = setting(0.52, "Nil threshold for conditions.", flag="--condition-nil")
    drug: float | None = setting(0.66, "Nil threshold for drug-like interventions.", flag="--drug-nil")
    other: float | None = setting(0.97, "Nil threshold for other interventions.", flag="--other-nil")

    def of(self, field_name: str) -> float | None:
        return {CONDITION: self.condition, DRUG: self.drug, OTHER: self.other}[field_name]


@dataclass(frozen=True)
class FieldBranches:
    """The MeSH tree branches each field may link to (``None``: any concept).

    NLM's own browse terms show the scope of each field: conditions are Diseases [C] and Mental Disorders [F03],
    and Behavioral Symptoms [F01.145.126] when written as their names (``condition_when_named``); drug-like
    interventions are Chemicals and Drugs [D], supplementary records through their mapped descriptors.
    A terminology without tree numbers (DrugBank, a TSV vocabulary) is not restricted.
    """

    condition: tuple[str, ...] | None = ("C", "F03")
    drug: tuple[str, ...] | None = ("D",)
    other: tuple[str, ...] | None = None
    # Further branches a condition links to only when it is written as one of their names. Behavioral Symptoms
    # [F01.145.126] hold "Depression", "Aggression", "Suicide": NLM gives them as condition terms, and a trial
    # registered for "Depression" means it (it was nil); but dense retrieval must not wander there from a
    # disorder ("Major Depression" is Depressive Disorder, Major, not Depression).
    condition_when_named: tuple[str, ...] = ("F01.145.126",)

    def of(self, field_name: str) -> tuple[str, ...] | None:
        return {CONDITION: self.condition, DRUG: self.drug, OTHER: self.other}[field_name]

    def when_named(self, field_name: str) -> tuple[str, ...]:
        """The branches an exact match of ``field_name`` may also link to."""
        return self.condition_when_named if field_name == CONDITION else ()


@dataclass(frozen=True)
class LinkedText:
    """One condition or intervention string and what it was linked to.

    ``stage`` is the linker's stage ("exact", "dense", "composite", "nil", …); ``nil_class`` names the kind of nil
    for placebo and standard-of-care interventions; ``type`` is the intervention type (``None`` for conditions).
    """

    text: str
    concepts: tuple[str, ...]
    names: tuple[str, ...]
    score: float | None
    stage: str
    type: str | None = None
    nil_class: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"text": self.text}
        if self.type is not None:
            row["type"] = self.type
        row.update(concepts=list(self.concepts), names=list(self.names), score=self.score, stage=self.stage)
        if self.type is not None:
            row["nil_class"] = self.nil_class
        return row


@dataclass(frozen=True)
class NormalizedTrial:
    nct_id: str
    conditions: tuple[LinkedText, ...] = ()
    interventions: tuple[LinkedText, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "nct_id": self.nct_id,
            "conditions": [c.to_dict() for c in self.conditions],
            "interventions": [i.to_dict() for i in self.interventions],
        }


@dataclass
class TrialNormalizer:
    """Links the conditions and interventions of trial records.

    ``conditions`` links conditions and non-drug interventions; ``interventions`` links drug-like interventions
    (the same linker when one terminology holds both). ``batch_records`` records are linked together.
    ``refine`` adds to a linked condition the narrower concepts that the record's title or summary name exactly
    (on the shared records' train split, conditions F1 0.847 → 0.872 against NLM's terms; docs/trials.md).
    ``qualifiers`` also links each condition without its staging and course qualifiers ("Stage IIIB Breast
    Cancer" → "Breast Cancer", :mod:`medlink.trials.normalization.conditions`) and keeps the better spelling.
    """

    conditions: Linker
    interventions: Linker
    thresholds: NilThresholds = field(default_factory=NilThresholds)
    batch_records: int = 256
    use_document: bool = True
    branches: FieldBranches = field(default_factory=FieldBranches)
    keywords: bool = False
    refine: bool = True
    qualifiers: bool = True  # also link each condition without its staging qualifiers (normalization/conditions.py)

    def __post_init__(self) -> None:
        self._scopes: dict[str, BranchScope | None] = {}
        self._exact_scopes: dict[str, BranchScope | None] = {}  # the scope of exact matches, when it is wider
        for field_name in (CONDITION, DRUG, OTHER):
            terminology = self._linker(field_name).terminology
            prefixes = self.branches.of(field_name)
            has_tree = bool(prefixes) and has_tree_numbers(terminology)
            scope = BranchScope(terminology, prefixes) if prefixes and has_tree else None
            self._scopes[field_name] = self._exact_scopes[field_name] = scope
            if scope is not None and (extra := self.branches.when_named(field_name)):
                self._exact_scopes[field_name] = BranchScope(terminology, (*scope.prefixes, *extra))
        scope = self._scopes[CONDITION]
        self._scanner = ConceptScanner(self.conditions.terminology, scope.prefixes if scope else None)

    def _linker(self, field_name: str) -> Linker:
        return self.interventions if field_name == DRUG else self.conditions

    def normalize(self, records: Iterable[TrialRecord]) -> Iterator[NormalizedTrial]:
        for batch in record_batches(records, self.batch_records):
            yield from self.normalize_batch(batch)

    def normalize_batch(self, records: Sequence[TrialRecord]) -> list[NormalizedTrial]:
        condition_results = self._link_conditions(records)
        prepared = [[self._prepare(item) for item in record.interventions] for record in records]
        spellings: dict[str, list] = {DRUG: [], OTHER: []}
        for record, items in zip(records, prepared, strict=True):
            for item, ready in zip(record.interventions, items, strict=True):
                for part in ready.parts:
                    spellings[field_of(item.type)].extend(part)
        linked = {
            DRUG: self._link_unique(self.interventions, spellings[DRUG]),
            OTHER: self._link_unique(self.conditions, spellings[OTHER]),
        }
        out = []
        for record, results, items in zip(records, condition_results, prepared, strict=True):
            conditions = tuple(
                self._finish(text, r, CONDITION) for text, r in zip(self._condition_texts(record), results, strict=True)
            )
            if self.keywords:  # a keyword counts only when it names a disease exactly
                conditions = conditions[: len(record.conditions)] + tuple(
                    c for c in conditions[len(record.conditions) :] if c.stage == Stage.EXACT.value and c.concepts
                )
            if self.refine:
                conditions = self._refined(record, conditions)
            interventions = tuple(
                self._intervention(item, ready, linked[field_of(item.type)])
                for item, ready in zip(record.interventions, items, strict=True)
            )
            out.append(NormalizedTrial(record.nct_id, conditions, interventions))
        return out

    def _link_conditions(self, records: Sequence[TrialRecord]) -> list[list[LinkResult]]:
        """Each condition's result: its first spelling matched exactly, else its best-scoring one (the written
        string, then, with ``qualifiers``, the string without its staging qualifiers)."""
        mentions: list[str | Mention] = []
        spellings = []
        for record in records:
            document = f"{record.title}. {record.brief_summary}" if self.use_document else None
            texts = self._condition_texts(record)
            groups = [condition_spellings(text) if self.qualifiers else (text,) for text in texts]
            spellings.append(groups)
            mentions.extend(Mention(text, document=document) for group in groups for text in group)
        results = iter(self.conditions.link_many(mentions))
        return [[_best_spelling([next(results) for _ in group]) for group in groups] for groups in spellings]

    def _refined(self, record: TrialRecord, conditions: tuple[LinkedText, ...]) -> tuple[LinkedText, ...]:
        """Each linked condition with the narrower concepts its record's title or summary names added: a trial
        registered for "Leukemia" whose title says "hairy cell leukemia" is about the narrower one."""
        if not any(c.concepts for c in conditions):
            return conditions
        named = self._scanner.scan_all((record.title, record.brief_summary))
        if not named:
            return conditions
        terminology = self.conditions.terminology
        lineages = {concept: set(terminology.ancestors(concept)) for concept in named}
        refined = []
        for row in conditions:
            narrower = [c for c in named if c not in row.concepts and lineages[c].intersection(row.concepts)]
            # the most specific only: "Leukemia, Hairy Cell" says "Leukemia" too
            narrower = [c for c in narrower if not any(c in lineages[other] for other in narrower)]
            if narrower:
                row = replace(
                    row,
                    concepts=row.concepts + tuple(narrower),
                    names=row.names + tuple(terminology.concept_preferred_name(c) for c in narrower),
                    stage=REFINED,
                    reason=f"{row.stage}, then narrower concepts named in the title or summary added; {row.reason}",
                )
            refined.append(row)
        return tuple(refined)

    def _condition_texts(self, record: TrialRecord) -> tuple[str, ...]:
        return (*record.conditions, *record.keywords) if self.keywords else record.conditions

    def _prepare(self, item: Intervention) -> PreparedIntervention:
        # a registered name that is a concept name stays whole
        whole = self._linker(field_of(item.type)).terminology.lookup(item.name)
        return prepare_intervention(item.name, item.other_names, split=not whole)

    @staticmethod
    def _link_unique(linker: Linker, texts: list[str]) -> dict[str, LinkResult]:
        unique = list(dict.fromkeys(texts))
        return dict(zip(unique, linker.link_many(unique), strict=True))

    def _intervention(
        self, item: Intervention, ready: PreparedIntervention, linked: dict[str, LinkResult]
    ) -> LinkedText:
        if ready.nil_class is not None:
            return LinkedText(
                item.name,
                (),
                (),
                None,
                Stage.NIL.value,
                item.type,
                ready.nil_class,
                f"a {ready.nil_class} intervention: no concept applies",
            )
        field_name = field_of(item.type)
        parts = [
            self._finish(spellings[0], _best_spelling([linked[s] for s in spellings]), field_name)
            for spellings in ready.parts
        ]
        if not parts:
            return LinkedText(item.name, (), (), None, Stage.EMPTY.value, item.type, reason="nothing left to link")
        if len(parts) == 1:
            only = parts[0]
            return LinkedText(
                item.name, only.concepts, only.names, only.score, only.stage, item.type, reason=only.reason
            )
        concepts = tuple(dict.fromkeys(c for part in parts for c in part.concepts))
        names = tuple(n for part in parts for n in part.names)
        scores = [part.score for part in parts if part.concepts and part.score is not None]
        return LinkedText(
            item.name,
            concepts,
            names,
            min(scores) if scores else None,
            Stage.COMPOSITE.value if concepts else Stage.NIL.value,
            item.type,
            reason="combination: " + "; ".join(f"{p.text} → {p.stage}" for p in parts),
        )

    def _finish(self, text: str, result: LinkResult, field_name: str) -> LinkedText:
        """The result as a row: one concept unless the linker claimed several (composites); nil under the
        field's threshold."""
        # Restricted after linking rather than inside the sieves (LinkerConfig.branches): an out-of-scope exact
        # match then stays a decision (its best in-scope candidate, or nil) instead of falling through to dense
        # retrieval, which did worse on the train split (conditions F1 0.872 → 0.868; docs/trials.md).
        scope = self._exact_scopes[field_name] if result.stage is Stage.EXACT else self._scopes[field_name]
        if scope is not None:
            result = scope.restrict(result)
        concepts = result.concepts if result.several else result.concepts[:1]
        threshold = self.thresholds.of(field_name)
        retrieved = result.stage not in (Stage.EXACT, Stage.NIL, Stage.EMPTY)
        if concepts and retrieved and threshold is not None and (result.score or 0.0) < threshold:
            return LinkedText(
                text,
                (),
                (),
                result.score,
                Stage.NIL.value,
                reason=f"best candidate {result.matched_name!r} scored {result.score:.3f}, below the "
                f"{field_name} nil threshold {threshold:.3f}",
            )
        terminology = self._linker(field_name).terminology
        names = tuple(terminology.concept_preferred_name(c) for c in concepts)
        # another spelling decided (qualifiers dropped, a salt, another name): say which
        reason = result.reason if result.mention == text else f"as {result.mention!r}: {result.reason}"
        return LinkedText(text, concepts, names, result.score, result.stage.value, reason=reason)


def record_batches(records: Iterable[TrialRecord], size: int) -> Iterator[list[TrialRecord]]:
    """``records`` in lists of ``size`` (the last one shorter)."""
    iterator = iter(records)
    while batch := list(islice(iterator, max(1, size))):
        yield batch


def field_of(intervention_type: str) -> str:
    """Which field's linker and threshold an intervention of this type takes."""
    return DRUG if intervention_type.strip().lower() in DRUG_TYPES else OTHER


def _best_spelling(results: Sequence[LinkResult]) -> LinkResult:
    """The first spelling matched exactly, else the best-scoring one that linked, else the first."""
    for result in results:
        if result.stage is Stage.EXACT:
            return result
    linked = [r for r in results if r.concepts]
    return max(linked, key=lambda r: r.score or 0.0) if linked else results[0]
