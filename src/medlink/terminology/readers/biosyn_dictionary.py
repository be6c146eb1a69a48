"""The ``id||name|synonym…`` dictionary layout of BioSyn-style tools (e.g. ``medic_06Jul2012.txt``).

Left of ``||`` are one or more ids joined by ``|``: the first is the concept's id, the others its alternative ids.
Right of it, the preferred name then synonyms joined by ``|``. Bare ids get a namespace: ``MESH`` by default, and
all-digit ids (MEDIC's OMIM numbers) ``OMIM``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.readers.concepts import build_concept, namespaced, split_field, split_names
from medlink.terminology.readers.source_files import iter_lines
from medlink.terminology.records import Concept, NameKind


def read_biosyn_dictionary(
    path: Path, report: ReadReport, namespace: str = "MESH", numeric_namespace: str = "OMIM", source: str | None = None
) -> Iterator[Concept]:
    def full_id(identifier: str) -> str:
        return namespaced(identifier, numeric_namespace if identifier.isdigit() else namespace)

    for number, line in iter_lines(path):
        if not line.strip():
            continue
        ids_part, sep, names_part = line.partition("||")
        if not sep:
            report.problem(path, number, "expected 'id||name|synonym…' (no '||' separator)")
            continue
        ids = [full_id(identifier) for identifier in split_field(ids_part)]
        names = split_names(names_part)
        if not ids:
            report.problem(path, number, "no concept id before '||'")
            continue
        concept = build_concept(
            report,
            path,
            number,
            ids[0],
            names[0] if names else None,
            [(name, NameKind.EXACT) for name in names[1:]],
            alt_ids=tuple(ids[1:]),
            source=source or path.name,
        )
        if concept is not None:
            yield concept
