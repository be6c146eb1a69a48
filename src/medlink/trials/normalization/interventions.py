"""What an intervention string needs before it is linked (DILBERT §3.1 on ClinicalTrials.gov interventions).

Registrants write interventions as they appear in a protocol: "Ibuprofen 600 mg oral tablet", "Perphenazine
[Trilafon]", "Nitrous oxide 40% and placebo", "irinotecan hydrochloride". Before linking:

- placebo, sham and standard-of-care interventions are recognized as nil classes of their own: no terminology
  concept is right for them, and saying which kind of nil it is helps a reader;
- strength, dosage form, route and schedule are stripped ("600 mg", "oral tablet", "IV", "twice daily");
- combinations are split on DILBERT's markers (``combination``, ``plus``, ``vs``, ``+``, ``/``, ``and``, ``with``)
  into one string per drug, a placebo part dropped;
- a salt or ester suffix is kept as a fallback spelling ("irinotecan hydrochloride" → "irinotecan"), since MeSH
  files most salts under their parent drug;
- text in brackets ("[Trilafon]") becomes another spelling, like the record's other names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from medlink.linking.mentions.respelling import without_salt
from medlink.linking.settings import LinkerConfig

PLACEBO, STANDARD_OF_CARE = "placebo", "standard-of-care"

# Intervention types whose strings name drugs (linked with the interventions terminology); the rest are linked
# with the conditions terminology's vocabulary of procedures, devices and behaviours, or are nil.
DRUG_TYPES = frozenset({"drug", "biological", "dietary supplement", "combination product"})

_PLACEBO = re.compile(
    r"\b(?:placebos?|sham|dummy|vehicle(?:\s+control)?|matching\s+(?:tablets?|capsules?))\b", re.IGNORECASE
)
_STANDARD_OF_CARE = re.compile(
    r"^(?:(?:the\s+)?(?:standard|usual|routine|conventional|current|best\s+supportive)\s+(?:of\s+)?"
    r"(?:medical\s+)?(?:care|treatment|therapy|practice|management)|soc|no\s+(?:intervention|treatment)|"
    r"control(?:\s+group)?|observation|wait(?:ing)?[\s-]list(?:\s+control)?|treatment\s+as\s+usual|tau)$",
    re.IGNORECASE,
)
_UNITS = r"(?:mg|mcg|µg|ug|g|kg|ml|mL|l|iu|IU|units?|mmol|meq|mEq|%|gy|Gy|cgy|cGy|mg/m2|mg/kg|mg/m²|ng|pfu|vp|cells)"
_STRENGTH = re.compile(
    rf"\b\d+(?:[.,]\d+)?(?:\s*[-–]\s*\d+(?:[.,]\d+)?)?\s*{_UNITS}(?:\s*/\s*(?:kg|m2|m²|day|d|dose|h|hr|ml|mL|week))*\b"
    rf"|(?<!\w)\d+(?:\.\d+)?\s*%",
    re.IGNORECASE,
)
_FORMS = re.compile(
    r"\b(?:oral(?:ly)?|intravenous(?:ly)?|i\.?v\.?|subcutaneous(?:ly)?|s\.?c\.?|intramuscular(?:ly)?|i\.?m\.?|"
    r"topical(?:ly)?|inhaled|intranasal|nasal|sublingual|transdermal|ophthalmic|rectal|vaginal|"
    r"tablets?|tabs?|capsules?|caps?|pills?|injections?|injectable|infusions?|solution|suspension|syrup|"
    r"cream|ointment|gel|patch(?:es)?|spray|drops|powder|inhaler|suppositor(?:y|ies)|lozenges?|"
    r"extended[\s-]release|sustained[\s-]release|controlled[\s-]release|delayed[\s-]release|xr|er|sr|"
    r"film[\s-]coated|chewable|once|twice|three\s+times|daily|weekly|per\s+day|a\s+day|bid|tid|qd|qid|dose)\b",
    re.IGNORECASE,
)
# No leading or trailing \s*: the pieces are stripped, and a leading \s* is tried from every space of a run (quadratic).
_SPLIT = re.compile(
    r"(?:\bin\s+combination\s+with\b|\bcombined\s+with\b|\bcombination\s+of\b|\bcombination\b|\bplus\b|"
    r"\bversus\b|\bvs\.?(?=\s|$)|\bwith\b|\band\b|\+|(?<=[a-z])/(?=[a-z])|;)",
    re.IGNORECASE,
)
_BRACKETS = re.compile(r"[\[(]([^\[\]()]+)[\])]")  # innermost only: an attempt ends at the next opener
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class PreparedIntervention:
    """An intervention string made ready to link: the parts to link, or the nil class it belongs to.

    ``parts`` holds, for each drug of a combination, its spellings in the order to try (cleaned text first, then
    without its salt, then bracketed and other names); ``nil_class`` is ``placebo`` or ``standard-of-care``."""

    text: str
    parts: tuple[tuple[str, ...], ...] = ()
    nil_class: str | None = None


def nil_class(text: str) -> str | None:
    """``placebo``, ``standard-of-care`` or ``None`` for an intervention string."""
    stripped = _SPACES.sub(" ", text).strip(" .")
    if _STANDARD_OF_CARE.match(stripped):
        return STANDARD_OF_CARE
    if _PLACEBO.search(stripped) and not [p for p in _split(stripped) if not _PLACEBO.search(p)]:
        return PLACEBO
    return None


def prepare_intervention(name: str, other_names: tuple[str, ...] = (), split: bool = True) -> PreparedIntervention:
    """Split and clean one registered intervention (``other_names`` are tried after its own spellings). A string
    longer than any name a linker reads (``LinkerConfig.max_mention_chars``) is passed on whole, untouched: the
    linker says why it is nil, and no pattern here runs over text of unbounded length."""
    if len(name) > LinkerConfig.max_mention_chars:
        return PreparedIntervention(name, ((name,),))
    written = _SPACES.sub(" ", name)  # runs of blanks made one: no pattern below sees a long run
    kind = nil_class(written)
    if kind is not None:
        return PreparedIntervention(name, nil_class=kind)
    bracketed = [b.strip() for b in _BRACKETS.findall(written) if b.strip() and not _STRENGTH.fullmatch(b.strip())]
    base = _BRACKETS.sub(" ", written)
    pieces = [p for p in (_split(base) if split else [base]) if not _PLACEBO.search(p)]
    parts = []
    for piece in pieces:
        spellings = _spellings(piece)
        if spellings:
            parts.append(spellings)
    extra = tuple(s for other in (*bracketed, *other_names) for s in _spellings(other))
    if len(parts) == 1:
        parts[0] = tuple(dict.fromkeys((*parts[0], *extra)))
    elif not parts and extra:
        parts = [extra]
    return PreparedIntervention(name, tuple(parts))


def _split(text: str) -> list[str]:
    return [p.strip(" ,.-") for p in _SPLIT.split(text) if p and p.strip(" ,.-")]


def clean_intervention(text: str) -> str:
    """Strength, dosage form, route and schedule removed: "Ibuprofen 600 mg oral tablet" → "Ibuprofen"."""
    cleaned = _FORMS.sub(" ", _STRENGTH.sub(" ", text))
    cleaned = _SPACES.sub(" ", cleaned).strip(" ,.-:;")
    return cleaned or _SPACES.sub(" ", text).strip()


def _spellings(text: str) -> tuple[str, ...]:
    cleaned = clean_intervention(text)
    if not cleaned:
        return ()
    unsalted = without_salt(cleaned)  # "estramustine phosphate sodium" → "estramustine"
    return tuple(dict.fromkeys(s for s in (cleaned, unsalted) if s))
