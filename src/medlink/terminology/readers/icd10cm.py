"""ICD-10-CM tabular list XML (CDC/NCHS ``icd10cm_tabular_YYYY.xml``).

Every block ``section`` (``ICD10CM:A00-A09``) and ``diag`` (``ICD10CM:A00.0``) becomes a concept: its ``desc`` is the
preferred name, its ``inclusionTerm`` notes are entry terms, and the element it is nested in is its parent. The
chapter title is the semantic type. Seventh-character extensions (``sevenChrDef``) are not expanded into codes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.terminology.readers.concepts import build_concept
from medlink.terminology.readers.source_files import open_binary
from medlink.terminology.records import Concept, NameKind

_TRAILING_RANGE = re.compile(r"\s*\([A-Z]\d[0-9A-Z]*(?:\.\w+)?-[A-Z]\d[0-9A-Z]*(?:\.\w+)?\)\s*$")


def _desc(element: ET.Element) -> str:
    return _TRAILING_RANGE.sub("", (element.findtext("desc") or "").strip())


def read_icd10cm_tabular(path: Path, report: ReadReport, source: str | None = None) -> Iterator[Concept]:
    try:
        with open_binary(path) as handle:
            root = ET.parse(handle).getroot()
    except ET.ParseError as error:
        raise SourceError(path, f"malformed XML ({error})", error.position[0]) from None
    if root.tag != "ICD10CM.tabular":
        raise SourceError(path, f"not an ICD-10-CM tabular file (root element <{root.tag}>)")
    label = source or f"ICD-10-CM {root.findtext('version') or ''}".strip()
    for chapter in root.iterfind("chapter"):
        chapter_name = _desc(chapter)
        for section in chapter.iterfind("section"):
            # A one-code section (id "B10") is the same thing as its code; only ranges become block concepts.
            block = section.get("id", "")
            parents: tuple[str, ...] = ()
            if "-" in block:
                parents = (f"ICD10CM:{block}",)
                yield from _concept(section, parents[0], (), chapter_name, label, path, report)
            for diag in section.iterfind("diag"):
                yield from _diag(diag, parents, chapter_name, label, path, report)


def _diag(
    diag: ET.Element, parents: tuple[str, ...], chapter: str, label: str, path: Path, report: ReadReport
) -> Iterator[Concept]:
    code = f"ICD10CM:{(diag.findtext('name') or '').strip()}"
    yield from _concept(diag, code, parents, chapter, label, path, report)
    for child in diag.iterfind("diag"):
        yield from _diag(child, (code,), chapter, label, path, report)


def _concept(
    element: ET.Element,
    concept_id: str,
    parents: tuple[str, ...],
    chapter: str,
    label: str,
    path: Path,
    report: ReadReport,
) -> Iterator[Concept]:
    inclusion_terms = [(note.text or "", NameKind.ENTRY_TERM) for note in element.iterfind("inclusionTerm/note")]
    concept = build_concept(
        report,
        path,
        None,
        concept_id,
        _desc(element),
        inclusion_terms,
        parents=parents,
        semantic_types=(chapter,) if chapter else (),
        source=label,
    )
    if concept is not None:
        yield concept
