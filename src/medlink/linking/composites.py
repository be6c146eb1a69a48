"""Splitting composite mentions into the parts that each name one concept (Miftahutdinov et al. §5.1).

Two shapes:

- explicit combinations, split on "combination of", "combined with", "in combination with", "plus", "vs",
  "versus" and "+": "combination of ribociclib + capecitabine" → "ribociclib", "capecitabine". A bare
  "combined" is not a marker: it belongs to names such as "severe combined immunodeficiency";
- coordinated modifiers sharing a head: "breast and ovarian cancer" → "breast cancer", "ovarian cancer";
  "colorectal, endometrial, or ovarian cancers" → three parts. Bare pairs ("nausea and vomiting") split too. A
  head that starts with a number belongs to the last conjunct alone: "hypertension and type 2 diabetes" is
  "hypertension" and "type 2 diabetes", not "hypertension 2 diabetes".

The linker splits only mentions that do not match a name exactly ("Hand, Foot and Mouth Disease" stays whole).
"""

from __future__ import annotations

import re

_COMBINATION = re.compile(
    r"\s*(?:\bin combination with\b|\bcombined with\b|\bcombination of\b|\bplus\b|"
    r"\bversus\b|\bvs\.?(?=\s|$)|\s\+\s|\+)\s*",
    re.IGNORECASE,
)
_COORDINATION = re.compile(r"^(?P<modifiers>(?:[\w-]+,\s+)*[\w-]+,?)\s+(?:and|or|and/or)\s+(?P<last>[\w-]+)"
                           r"(?P<head>(?:\s+[\w-]+)*)$", re.IGNORECASE)  # fmt: skip


_NUMBERED = re.compile(r"^(?:\d|[ivx]+\b)", re.IGNORECASE)


def split_composite(text: str) -> list[str] | None:
    """The parts of a composite mention, or ``None`` when it names one thing."""
    parts = [part.strip(" ,;") for part in _COMBINATION.split(text) if part and part.strip(" ,;")]
    if len(parts) > 1:
        return parts
    match = _COORDINATION.match(text.strip())
    if match is None:
        return None
    modifiers = [m.strip(" ,") for m in match.group("modifiers").split(",") if m.strip(" ,")]
    head = match.group("head").strip()
    if _NUMBERED.match(head):  # "type 2 diabetes": "type" names nothing without its number
        return [*modifiers, f"{match.group('last')} {head}"]
    conjuncts = [*modifiers, match.group("last")]
    return [f"{conjunct} {head}".strip() for conjunct in conjuncts]
