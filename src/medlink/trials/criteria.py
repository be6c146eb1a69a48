"""Eligibility text into lists of inclusion and exclusion criteria.

ClinicalTrials.gov stores eligibility as one free-text block. Since about 2007 it is written as "Inclusion
Criteria:" and "Exclusion Criteria:" sections of bulleted or numbered lines; older records (the PDQ cancer trials of
the 1990s) use sub-headings ("DISEASE CHARACTERISTICS:", "PRIOR CONCURRENT THERAPY:") with "Excluded:" /
"Not allowed:" blocks inside them, and many records have no exclusion section at all. A heading switches the
section; sub-headings do not, so their lines stay with the section they are in. Lines wrapped in the source are
joined back into one criterion; bullets and numbering are removed.
"""

from __future__ import annotations

import re

INCLUSION, EXCLUSION = "inclusion", "exclusion"

_EXCLUSION_HEADING = re.compile(
    r"^(?:key\s+|main\s+|general\s+)?(?:exclusion(?:ary)?\s+criteri(?:a|on)|excluded|not\s+allowed|"
    r"patients?\s+(?:with\s+the\s+following\s+(?:prior\s+conditions\s+)?)?(?:are|will\s+be)\s+excluded|"
    r"(?:patients?|subjects?|participants?|you)\s+(?:will\s+)?(?:not\s+be|are\s+not|may\s+not\s+be)\s+eligible.*|"
    r"ineligibility\s+criteria|contraindications?)\s*:?$",
    re.IGNORECASE,
)
_INCLUSION_HEADING = re.compile(
    r"^(?:key\s+|main\s+|general\s+)?(?:inclusion(?:ary)?\s+criteri(?:a|on)|eligibility\s+criteria|allowed|"
    r"required|(?:patients?|subjects?|participants?|you)\s+(?:may|must|will)\s+be\s+eligible.*|"
    r"(?:patients?|subjects?)\s+must\s+have)\s*:?$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^(?:[-*•·o]\s+|\(?\d{1,2}[.)]\s*|\(?[a-z][.)]\s+|[ivx]{1,4}[.)]\s+)", re.IGNORECASE)
_SUBHEADING = re.compile(r"^[A-Z][A-Za-z /,&()-]{1,60}:$")


def split_criteria(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(inclusion, exclusion)`` criteria of an eligibility block; text before any heading counts as inclusion."""
    criteria: dict[str, list[str]] = {INCLUSION: [], EXCLUSION: []}
    section = INCLUSION
    current: list[str] = []
    indent_of_current = -1

    def flush() -> None:
        nonlocal current
        if current:
            criteria[section].append(" ".join(current))
            current = []

    for raw in text.replace("\r", "").splitlines():
        line = raw.strip().lstrip("-").strip() if _is_dash_heading(raw) else raw.strip()
        if not line:
            flush()
            continue
        bare = line.rstrip(":").strip()
        heading = EXCLUSION if _EXCLUSION_HEADING.match(bare) else INCLUSION if _INCLUSION_HEADING.match(bare) else None
        if heading is not None:
            flush()
            section = heading
            continue
        if _SUBHEADING.match(line):
            flush()
            continue
        indent = len(raw) - len(raw.lstrip())
        bullet = _BULLET.match(line)
        if bullet or not current or indent <= indent_of_current - 1:
            flush()
            current = [line[bullet.end() :].strip() if bullet else line]
            indent_of_current = indent + (bullet.end() if bullet else 0)
        else:
            current.append(line)  # a wrapped line continues the criterion above
    flush()
    return tuple(c for c in criteria[INCLUSION] if c), tuple(c for c in criteria[EXCLUSION] if c)


def _is_dash_heading(raw: str) -> bool:
    """'-  Inclusion Criteria:' written as a bullet (192 of the shared records do)."""
    stripped = raw.strip()
    return stripped.startswith("-") and stripped.endswith(":") and len(stripped) < 80
