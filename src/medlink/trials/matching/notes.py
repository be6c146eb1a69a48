"""A patient note and what the matcher reads off it before any model: age and sex.

Notes in TREC and SIGIR collections open with the demographics ("A 58-year-old African-American woman …",
"Patient is a 45-year-old man", "2-day-old female infant", "a 6 month old boy"); ages are converted to years.
What is not stated stays ``None``: a missing age or sex never excludes a trial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from medlink.errors import MedlinkError

MAX_NOTE_CHARS = 20_000  # longer notes are cut here: the encoders read 256 tokens and BM25 gains nothing more

_UNIT_YEARS = {"year": 1.0, "yr": 1.0, "month": 1 / 12, "mo": 1 / 12, "week": 1 / 52, "wk": 1 / 52, "day": 1 / 365}
_AGE = re.compile(
    r"""
    \b(\d{1,3}(?:\.\d)?)[\s-]*(year|yr|month|mo|week|wk|day)s?[\s-]*old\b   # "58-year-old", "3 months old"
    | \b(?:aged?|age\ of)\s+(\d{1,3})\b                                    # "aged 58", "age of 58"
    | \b(\d{1,3})\s*(?:yo|y/o|y\.o\.|yr\ old)\b                           # "58 yo", "58 y/o"
""",
    re.IGNORECASE | re.VERBOSE,
)
_FEMALE = re.compile(r"\b(woman|women|female|girl|lady|she|her|mother|pregnant|gravida)\b", re.IGNORECASE)
_MALE = re.compile(r"\b(man|men|male|boy|gentleman|he|his|him)\b", re.IGNORECASE)
_SEX_WORD = re.compile(r"\b(woman|female|girl|lady|man|male|boy|gentleman)\b", re.IGNORECASE)


@dataclass(frozen=True)
class PatientNote:
    text: str
    age: float | None  # years
    sex: str | None  # "female", "male" or None


def read_note(text: str) -> PatientNote:
    """The note with its age and sex; an empty note is an error, an overlong one is cut at MAX_NOTE_CHARS."""
    if not isinstance(text, str) or not text.strip():
        raise MedlinkError("the patient note is empty: give a description of the patient (age, sex, history, findings)")
    text = " ".join(text.split())[:MAX_NOTE_CHARS]
    return PatientNote(text, note_age(text), note_sex(text))


def note_age(text: str) -> float | None:
    match = _AGE.search(text)
    if match is None:
        return None
    if match.group(1):
        return round(float(match.group(1)) * _UNIT_YEARS[match.group(2).lower()], 3)
    return float(match.group(3) or match.group(4))


def note_sex(text: str) -> str | None:
    """The sex named next to the age ("58-year-old woman"), else the majority of gendered words."""
    first = _SEX_WORD.search(text[:200])
    if first is not None:
        return "female" if first.group(1).lower() in {"woman", "female", "girl", "lady"} else "male"
    female, male = len(_FEMALE.findall(text)), len(_MALE.findall(text))
    if female == male:
        return None
    return "female" if female > male else "male"


@dataclass(frozen=True)
class Demographics:
    """A trial's limits against a note: ``None`` where the note or the trial says nothing."""

    age_ok: bool | None
    sex_ok: bool | None

    @property
    def excluded(self) -> bool:
        return self.age_ok is False or self.sex_ok is False


def check_demographics(
    note: PatientNote, minimum_age: float | None, maximum_age: float | None, sex: str
) -> Demographics:
    age_ok = None
    if note.age is not None and (minimum_age is not None or maximum_age is not None):
        age_ok = (minimum_age is None or note.age >= minimum_age) and (maximum_age is None or note.age <= maximum_age)
    sex_ok = None if note.sex is None or sex in ("all", "", None) else note.sex == sex
    return Demographics(age_ok, sex_ok)
