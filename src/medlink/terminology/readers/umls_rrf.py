"""UMLS Rich Release Format: ``MRCONSO.RRF`` names, ``MRSTY.RRF`` semantic types, ``MRREL.RRF`` relations.

For licensed UMLS users; point the reader at the ``META`` folder (or at ``MRCONSO.RRF`` itself, the other two
files are then looked for beside it). Column layouts are those of the UMLS Reference Manual, section 3.3:

- MRCONSO: CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
- MRSTY:   CUI|TUI|STN|STY|ATUI|CVF|
- MRREL:   CUI1|AUI1|STYPE1|REL|CUI2|AUI2|STYPE2|RELA|RUI|SRUI|SAB|SL|RG|DIR|SUPPRESS|CVF|

Filters: languages (``LAT``, default English), source vocabularies (``SAB``, default all), and suppression
(rows with ``SUPPRESS`` O, E or Y are dropped unless asked for). The preferred name is the row with TS=P, STT=PF,
ISPREF=Y. REL is "the relationship of the second concept to the first": a ``PAR`` row makes CUI2 a parent of CUI1;
``RO``/``RB``/``RN``/``RQ`` rows become relations named by RELA (or REL) from CUI2 to CUI1.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.terminology.readers.concepts import build_concept
from medlink.terminology.readers.source_files import iter_lines
from medlink.terminology.records import Concept, NameKind, Relation

_MRCONSO_COLUMNS = 18
_MRSTY_COLUMNS = 6
_MRREL_COLUMNS = 16
_SUPPRESSED = {"O", "E", "Y"}
_ABBREVIATION_TTYS = {"AB", "ACR", "AA", "AM", "AUN"}
_RELATION_RELS = {"RO", "RB", "RN", "RQ"}


@dataclass
class _Draft:
    preferred: str | None = None
    names: list[tuple[str, NameKind]] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


def _rows(path: Path, columns: int, report: ReadReport) -> Iterator[tuple[int, list[str]]]:
    for number, line in iter_lines(path):
        if not line:
            continue
        values = line.split("|")
        if len(values) < columns:
            report.problem(path, number, f"expected {columns} '|'-separated columns, found {len(values) - 1}")
            continue
        yield number, values


def read_umls_rrf(
    path: Path,
    report: ReadReport,
    languages: Collection[str] = ("ENG",),
    vocabularies: Collection[str] | None = None,
    include_suppressed: bool = False,
    source: str | None = None,
) -> Iterator[Concept]:
    folder = path if path.is_dir() else path.parent
    mrconso = path if path.is_file() else folder / "MRCONSO.RRF"
    if not mrconso.exists():
        raise SourceError(mrconso, "MRCONSO.RRF not found; point at the UMLS META folder or at MRCONSO.RRF")

    def kept(sab: str, suppress: str) -> bool:
        return (vocabularies is None or sab in vocabularies) and (include_suppressed or suppress not in _SUPPRESSED)

    drafts: dict[str, _Draft] = {}
    for _number, row in _rows(mrconso, _MRCONSO_COLUMNS, report):
        cui, lat, ts, stt, ispref, sab, tty, text, suppress = (
            row[0],
            row[1],
            row[2],
            row[4],
            row[6],
            row[11],
            row[12],
            row[14],
            row[16],
        )
        if lat not in languages or not kept(sab, suppress):
            continue
        draft = drafts.setdefault(cui, _Draft())
        if draft.preferred is None and ts == "P" and stt == "PF" and ispref == "Y":
            draft.preferred = text
        draft.names.append((text, NameKind.ABBREVIATION if tty in _ABBREVIATION_TTYS else NameKind.EXACT))

    mrsty = folder / "MRSTY.RRF"
    if mrsty.exists():
        for _number, row in _rows(mrsty, _MRSTY_COLUMNS, report):
            if row[0] in drafts:
                drafts[row[0]].types.append(row[1])
    mrrel = folder / "MRREL.RRF"
    if mrrel.exists():
        for _number, row in _rows(mrrel, _MRREL_COLUMNS, report):
            cui1, rel, cui2, rela, sab, suppress = row[0], row[3], row[4], row[7], row[10], row[14]
            if cui1 not in drafts or cui2 not in drafts or cui1 == cui2 or not kept(sab, suppress):
                continue
            if rel == "PAR":
                drafts[cui1].parents.append(f"UMLS:{cui2}")
            elif rel in _RELATION_RELS:
                drafts[cui2].relations.append(Relation(f"UMLS:{cui2}", rela or rel, f"UMLS:{cui1}"))

    label = source or f"UMLS {folder.parent.name}".strip()
    for cui, draft in drafts.items():
        names = draft.names
        preferred = draft.preferred or names[0][0]
        concept = build_concept(
            report,
            mrconso,
            None,
            f"UMLS:{cui}",
            preferred,
            [(text, kind) for text, kind in names if text != preferred],
            semantic_types=tuple(dict.fromkeys(draft.types)),
            parents=tuple(dict.fromkeys(draft.parents)),
            source=label,
            relations=tuple(dict.fromkeys(draft.relations)),
        )
        if concept is not None:
            yield concept
