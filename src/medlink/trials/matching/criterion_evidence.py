"""Each eligibility criterion of a trial checked against what the note says, as TrialGPT reads a trial
(Jin et al., 2024): met, not met, or unknown, with the note's words that decided it.

What is checked, without a language model:
- **diseases**: the concepts a criterion names (:class:`~medlink.linking.mentions.scanner.ConceptScanner`) against
  the note's, kept apart by how the note says them: the patient has it, the note denies it ("no history of heart
  failure"), or a relative has it ("her mother had breast cancer", which meets only a family-history criterion).
  A note's concept meets a criterion's when it is the same or narrower ("type 2 diabetes" meets "diabetes
  mellitus"); the note's concepts and everything above them are looked up once per note. A criterion that itself
  denies ("no prior heart failure") is met when the note denies it too and not met when the patient has it.
- **age** ("aged 18 to 65 years", "≥ 18 years of age", "65 years or older") against the note's age;
- **sex** in a short criterion that names one sex only ("Postmenopausal women", "Male").

For an exclusion criterion "met" means the patient is excluded. A disease the trial is about, or above it, does not
exclude ("uncontrolled type 2 diabetes" in a diabetes trial qualifies its patients). Everything else is unknown:
"unknown" is the honest answer for most criteria ("ECOG 0–1", "adequate renal function").
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from medlink.linking.mentions.scanner import ConceptScanner, Finding
from medlink.trials.matching.notes import PatientNote

MET, NOT_MET, UNKNOWN = "met", "not met", "unknown"
INCLUSION, EXCLUSION = "inclusion", "exclusion"
_SHORT_CRITERION_WORDS = 6  # a longer criterion naming a sex is usually about something else ("women who could …")

_NUMBER = r"(\d{1,3})"
_AGE_RANGE = re.compile(rf"{_NUMBER}\s*(?:-|–|to|and)\s*{_NUMBER}\s*(?:years|yrs)", re.IGNORECASE)
_AGE_MIN = re.compile(
    rf"(?:≥|>=|>|at least|over|older than|above|aged)\s*{_NUMBER}\s*(?:years|yrs)?"
    rf"|{_NUMBER}\s*(?:years|yrs)(?:\s+of age|\s+old)?\s*(?:or|and)\s*(?:older|over|above)",
    re.IGNORECASE,
)
_AGE_MAX = re.compile(
    rf"(?:≤|<=|<|under|younger than|less than|below|up to)\s*{_NUMBER}\s*(?:years|yrs)", re.IGNORECASE
)
# an age limit, not a duration ("diagnosed less than 5 years ago")
_AGE_CONTEXT = re.compile(r"\bage\b|\baged\b|years? old|years? of age|\bolder\b|\byounger\b", re.IGNORECASE)
_FEMALE = re.compile(r"\b(women|woman|female|females|girls)\b", re.IGNORECASE)
_MALE = re.compile(r"\b(men|man|male|males|boys)\b", re.IGNORECASE)


@dataclass(frozen=True)
class CriterionVerdict:
    side: str  # INCLUSION or EXCLUSION
    criterion: str
    verdict: str  # MET, NOT_MET or UNKNOWN
    evidence: str = ""  # the note's words that decided it

    def to_dict(self) -> dict[str, str]:
        return {"side": self.side, "criterion": self.criterion, "verdict": self.verdict, "evidence": self.evidence}


@dataclass(frozen=True)
class CriterionFacts:
    """What a criterion asks, read once per trial (it does not depend on the note)."""

    text: str
    findings: tuple[Finding, ...] = ()
    minimum_age: float | None = None
    maximum_age: float | None = None
    sex: str | None = None


@dataclass(frozen=True)
class NoteFacts:
    """What a note says that criteria are checked against, per how it is said (the patient has it, denies it, a
    relative has it): every concept the note names and every concept above one, → the clause that names it. A
    criterion's concept is met when it is in there: the same concept or a broader one than the note's."""

    note: PatientNote
    present: dict[str, str]
    denied: dict[str, str]
    family: dict[str, str]


def read_criterion(text: str, scanner: ConceptScanner | None) -> CriterionFacts:
    minimum, maximum = _age_limits(text)
    return CriterionFacts(text, scanner.findings(text) if scanner else (), minimum, maximum, _sex_limit(text))


def read_note_facts(
    note: PatientNote, scanner: ConceptScanner | None, findings: Sequence[Finding] | None = None
) -> NoteFacts:
    """``findings``: the scanner's findings in the note when the caller has them already (else it scans)."""
    present: dict[str, str] = {}
    denied: dict[str, str] = {}
    family: dict[str, str] = {}
    if scanner is None:
        return NoteFacts(note, present, denied, family)
    for finding in scanner.findings(note.text) if findings is None else findings:
        kind = family if finding.family else denied if finding.negated else present
        for concept in (finding.concept_id, *scanner.terminology.ancestors(finding.concept_id)):
            kind.setdefault(concept, finding.clause)
    return NoteFacts(note, present, denied, family)


def judge_criteria(
    side: str, criteria: Sequence[CriterionFacts], facts: NoteFacts, not_excluding: Collection[str] = ()
) -> tuple[CriterionVerdict, ...]:
    """A verdict per criterion. ``not_excluding``: concepts that do not exclude (the trial's own conditions and
    above)."""
    return tuple(_judge(side, criterion, facts, not_excluding) for criterion in criteria)


def _judge(side: str, criterion: CriterionFacts, facts: NoteFacts, not_excluding: Collection[str]) -> CriterionVerdict:
    def verdict(value: str, evidence: str = "") -> CriterionVerdict:
        return CriterionVerdict(side, criterion.text, value, evidence)

    note = facts.note
    if note.age is not None and (criterion.minimum_age is not None or criterion.maximum_age is not None):
        inside = (criterion.minimum_age is None or note.age >= criterion.minimum_age) and (
            criterion.maximum_age is None or note.age <= criterion.maximum_age
        )
        return verdict(MET if inside else NOT_MET, f"age {note.age:g}")
    if criterion.sex is not None and note.sex is not None:
        return verdict(MET if note.sex == criterion.sex else NOT_MET, f"sex {note.sex}")
    for finding in criterion.findings:  # the first concept the note speaks to decides
        concept = finding.concept_id
        if side == EXCLUSION and concept in not_excluding:
            continue
        has = facts.family if finding.family else facts.present
        if concept in has:
            return verdict(NOT_MET if finding.negated else MET, has[concept])
        if not finding.family and concept in facts.denied:
            return verdict(MET if finding.negated else NOT_MET, facts.denied[concept])
    return verdict(UNKNOWN)


def _age_limits(text: str) -> tuple[float | None, float | None]:
    if not _AGE_CONTEXT.search(text):
        return None, None
    if match := _AGE_RANGE.search(text):
        low, high = sorted((float(match.group(1)), float(match.group(2))))
        return low, high
    minimum = next((float(g) for m in _AGE_MIN.finditer(text) for g in m.groups() if g), None)
    maximum = next((float(g) for m in _AGE_MAX.finditer(text) for g in m.groups() if g), None)
    return minimum, maximum


def _sex_limit(text: str) -> str | None:
    if len(text.split()) > _SHORT_CRITERION_WORDS:
        return None
    female, male = bool(_FEMALE.search(text)), bool(_MALE.search(text))
    if female == male:
        return None
    return "female" if female else "male"


def criteria_signals(
    inclusion: Sequence[CriterionVerdict], exclusion: Sequence[CriterionVerdict]
) -> tuple[float, float]:
    """(share of the inclusion criteria met, whether any inclusion criterion is not met or exclusion met)."""
    met = sum(v.verdict == MET for v in inclusion) / len(inclusion) if inclusion else 0.0
    failed = any(v.verdict == NOT_MET for v in inclusion) or any(v.verdict == MET for v in exclusion)
    return met, float(failed)
