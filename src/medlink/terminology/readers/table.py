"""Generic code/name tables: TSV, CSV or Excel (``.xlsx``) with one name per row.

``id<TAB>name[<TAB>kind]``: rows that repeat an id add synonyms to it (the first row's name is preferred); the
optional third column is a :class:`NameKind` (``exact``, ``abbreviation``…). Lines starting with ``#`` are
comments. A first row whose id cell has no digit (``code``, ``id``) is taken as a header.

With ``hierarchy="prefix"`` (the ``code-table`` format, e.g. the ICD-10 knowledge base of CHIP-CDN), a code's
parent is the longest other code that is a prefix of it: ``A00.001`` is under ``A00.0``, which is under ``A00``
(the "tree coding" that Liang et al. sample negatives from). Bare ids get ``namespace``.
"""

from __future__ import annotations

import csv
from collections.abc import Collection, Iterator
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.terminology.readers.concepts import build_concept, namespaced
from medlink.terminology.readers.source_files import iter_lines
from medlink.terminology.records import Concept, Name, NameKind


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".xlsx", ".xlsm")):
        yield from _excel_rows(path)
        return
    delimiter = "," if name.endswith(".csv") else "\t"
    for number, line in iter_lines(path):
        if line.strip() and not line.startswith("#"):
            if delimiter != ",":
                yield number, line.split("\t")
                continue
            try:
                yield number, next(csv.reader([line], delimiter=delimiter))
            except csv.Error as error:  # a field over csv's size limit, a stray quote
                raise SourceError(path, f"malformed CSV ({error})", number) from None


def _excel_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    import zipfile

    import openpyxl

    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, OSError) as error:
        raise SourceError(path, f"not a readable .xlsx workbook ({error})") from None
    try:
        for number, row in enumerate(workbook.worksheets[0].iter_rows(values_only=True), start=1):
            cells = ["" if value is None else str(value).strip() for value in row]
            if any(cells):
                yield number, cells
    finally:
        workbook.close()


def read_table(
    path: Path,
    report: ReadReport,
    namespace: str = "CODE",
    hierarchy: str = "none",
    header: bool | None = None,
    source: str | None = None,
) -> Iterator[Concept]:
    if hierarchy not in ("none", "prefix"):
        raise ValueError(f"hierarchy must be 'none' or 'prefix', not {hierarchy!r}")
    drafts: dict[str, tuple[int, list[Name]]] = {}
    first = True
    for number, cells in _rows(path):
        if first and (header or (header is None and not any(char.isdigit() for char in cells[0]))):
            first = False
            continue
        first = False
        if len(cells) < 2 or not cells[0].strip():
            report.problem(path, number, "expected 'id<TAB>name', found fewer than 2 columns or an empty id")
            continue
        identifier, text = cells[0].strip(), cells[1].strip()
        try:
            kind = NameKind.parse(cells[2]) if len(cells) > 2 and cells[2].strip() else NameKind.EXACT
        except ValueError as error:
            report.problem(path, number, str(error))
            continue
        if not text:
            report.note("empty names dropped")
            continue
        line, names = drafts.setdefault(namespaced(identifier, namespace), (number, []))
        names.append(Name(text, kind))
    parents = _prefix_parents(drafts) if hierarchy == "prefix" else {}
    for concept_id, (line, names) in drafts.items():
        concept = build_concept(
            report,
            path,
            line,
            concept_id,
            names[0].text,
            names[1:],
            parents=parents.get(concept_id, ()),
            source=source or path.name,
        )
        if concept is not None:
            yield concept


def _prefix_parents(codes: Collection[str]) -> dict[str, tuple[str, ...]]:
    parents: dict[str, tuple[str, ...]] = {}
    for code in codes:
        namespace, _, local = code.rpartition(":")
        for end in range(len(local) - 1, 0, -1):
            candidate = f"{namespace}:{local[:end].rstrip('.')}" if namespace else local[:end].rstrip(".")
            if candidate != code and candidate in codes:
                parents[code] = (candidate,)
                break
    return parents


def read_code_table(
    path: Path, report: ReadReport, namespace: str = "CODE", header: bool | None = None, source: str | None = None
) -> Iterator[Concept]:
    """A code/name table whose hierarchy is given by code prefixes."""
    return read_table(path, report, namespace=namespace, hierarchy="prefix", header=header, source=source)
