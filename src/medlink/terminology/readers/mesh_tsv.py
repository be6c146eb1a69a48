"""MeSH descriptor and supplementary-concept TSV files (the layout in ``shared/data/terminologies/mesh``).

Descriptors: ``id<TAB>preferred name<TAB>entry terms joined by |<TAB>tree numbers joined by |``. The hierarchy comes
from tree numbers: ``C14.280.647`` is under ``C14.280``. Categories come from the tree branches (``C`` Diseases).

Supplementary concepts: ``id<TAB>name<TAB>synonyms joined by |<TAB>mapped descriptor ids joined by ,``. The
descriptors a supplementary concept is mapped to become its broader concepts (parents). Quotes are ordinary
characters here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.readers.concepts import build_concept, namespaced, split_field, split_names
from medlink.terminology.readers.source_files import iter_lines
from medlink.terminology.records import Concept, NameKind

# The 16 top-level MeSH tree categories.
MESH_CATEGORIES = {
    "A": "Anatomy",
    "B": "Organisms",
    "C": "Diseases",
    "D": "Chemicals and Drugs",
    "E": "Analytical, Diagnostic and Therapeutic Techniques, and Equipment",
    "F": "Psychiatry and Psychology",
    "G": "Phenomena and Processes",
    "H": "Disciplines and Occupations",
    "I": "Anthropology, Education, Sociology, and Social Phenomena",
    "J": "Technology, Industry, and Agriculture",
    "K": "Humanities",
    "L": "Information Science",
    "M": "Named Groups",
    "N": "Health Care",
    "V": "Publication Characteristics",
    "Z": "Geographicals",
}


def categories_of(tree_numbers: Iterable[str]) -> tuple[str, ...]:
    """MeSH categories (``Diseases``) of a descriptor's tree numbers, in first-seen order."""
    return tuple(dict.fromkeys(MESH_CATEGORIES[t[0]] for t in tree_numbers if t and t[0] in MESH_CATEGORIES))


def parents_from_tree_numbers(tree_numbers_of: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """For each descriptor, the descriptors one level above any of its tree numbers."""
    owner = {number: concept_id for concept_id, numbers in tree_numbers_of.items() for number in numbers}
    parents = {}
    for concept_id, numbers in tree_numbers_of.items():
        above = (owner.get(number.rpartition(".")[0]) for number in numbers if "." in number)
        parents[concept_id] = tuple(dict.fromkeys(p for p in above if p is not None and p != concept_id))
    return parents


def _rows(path: Path, report: ReadReport, columns: str) -> Iterator[tuple[int, list[str]]]:
    """Non-blank rows padded to four columns; a row without at least an id and a name is a problem."""
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        values = line.split("\t")
        if len(values) < 2:
            report.problem(path, number, f"expected '{columns}' columns, found {len(values)}")
            continue
        yield number, [*values, "", ""][:4]


def read_mesh_descriptors_tsv(path: Path, report: ReadReport, source: str | None = None) -> Iterator[Concept]:
    concepts: list[Concept] = []
    for number, (identifier, name, entry_terms, tree_field) in _rows(
        path, report, "id, name, entry terms, tree numbers"
    ):
        tree_numbers = tuple(split_field(tree_field))
        concept = _mesh_concept(
            report,
            path,
            number,
            identifier,
            name,
            entry_terms,
            NameKind.ENTRY_TERM,
            tree_numbers=tree_numbers,
            semantic_types=categories_of(tree_numbers),
            source=source or "MeSH descriptors",
        )
        if concept is not None:
            concepts.append(concept)
    parents = parents_from_tree_numbers({concept.id: concept.tree_numbers for concept in concepts})
    for concept in concepts:
        yield Concept(**{**vars(concept), "parents": parents[concept.id]})


def read_mesh_supplementary_tsv(path: Path, report: ReadReport, source: str | None = None) -> Iterator[Concept]:
    for number, (identifier, name, synonyms, mapped) in _rows(path, report, "id, name, synonyms, mapped descriptors"):
        parents = tuple(namespaced(d.lstrip("*"), "MESH") for d in split_field(mapped.replace(",", "|")))
        concept = _mesh_concept(
            report,
            path,
            number,
            identifier,
            name,
            synonyms,
            NameKind.EXACT,
            parents=parents,
            source=source or "MeSH supplementary concepts",
        )
        if concept is not None:
            yield concept


def _mesh_concept(
    report: ReadReport, path: Path, number: int, identifier: str, name: str, names: str, kind: NameKind, **fields: Any
) -> Concept | None:
    """A MeSH record's concept: its id namespaced, its other names (one ``|``-separated field) all of ``kind``."""
    return build_concept(
        report,
        path,
        number,
        namespaced(identifier, "MESH"),
        name,
        [(other, kind) for other in split_names(names)],
        **fields,
    )
