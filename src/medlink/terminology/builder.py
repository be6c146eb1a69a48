"""Merging concepts from one or more sources into a consistent :class:`Terminology`.

Rules:
- the same id twice in one source is merged with a warning; the same id in two sources (MeSH and MEDIC both have
  ``MESH:D009203``) is merged silently and counted: names, parents and ids are united, the first source's preferred
  name and definition win;
- a parent given by an alternative id is replaced by the concept's own id; a parent that is not in the
  terminology is dropped and counted, so navigation never meets an unknown id;
- an ``is_a`` cycle is reported (an error in strict mode) and broken by dropping the edge that closes it, so the
  hierarchy stays a DAG for the samplers that walk it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from medlink.errors import MedlinkError
from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.hierarchy import closing_edges
from medlink.terminology.records import Concept, Name, NameKind
from medlink.terminology.terminology import SourceInfo, Terminology
from medlink.text import Normalizer


class TerminologyBuilder:
    """Collects concepts source by source, then :meth:`build` checks and freezes them."""

    def __init__(self, report: ReadReport | None = None, normalizer: Normalizer | None = None) -> None:
        self.report = report or ReadReport()
        self.normalizer = normalizer or Normalizer()
        self._concepts: dict[str, Concept] = {}
        self._origin: dict[str, str] = {}
        self._sources: list[SourceInfo] = []

    def add_source(self, concepts: Iterable[Concept], info: SourceInfo | None = None, label: str = "") -> int:
        """Add every concept of one source; returns how many concepts the source had."""
        label = info.path if info else label
        count = 0
        for concept in concepts:
            self.add(concept, label)
            count += 1
        if info is not None:
            self._sources.append(replace(info, concepts=count))
        return count

    def add(self, concept: Concept, source_label: str = "") -> None:
        existing = self._concepts.get(concept.id)
        if existing is None:
            self._concepts[concept.id] = concept
            self._origin[concept.id] = source_label
            return
        if self._origin[concept.id] == source_label:
            self.report.note("duplicate ids merged", f"{source_label}: {concept.id}")
        else:
            self.report.note("concepts merged across sources")
        self._concepts[concept.id] = merge_concepts(existing, concept)

    def build(self) -> Terminology:
        concepts = self._checked_concepts()
        return Terminology.from_concepts(concepts, sources=self._sources, normalizer=self.normalizer)

    def _checked_concepts(self) -> list[Concept]:
        ids = self._concepts
        canonical = {concept_id: concept_id for concept_id in ids}
        for concept in ids.values():
            for alt_id in concept.alt_ids:
                canonical.setdefault(alt_id, concept.id)
        fixed: dict[str, Concept] = {}
        for concept in ids.values():
            parents = []
            for parent in concept.parents:
                target = canonical.get(parent)
                if target is None:
                    self.report.note("parents not in the terminology dropped", f"{concept.id} is_a {parent}")
                elif target != concept.id and target not in parents:
                    parents.append(target)
            fixed[concept.id] = (
                replace(concept, parents=tuple(parents)) if tuple(parents) != concept.parents else concept
            )
        return list(self._break_cycles(fixed).values())

    def _break_cycles(self, concepts: dict[str, Concept]) -> dict[str, Concept]:
        ids = list(concepts)
        row = {concept_id: number for number, concept_id in enumerate(ids)}
        parent_rows = [[row[parent] for parent in concepts[concept_id].parents] for concept_id in ids]
        dropped: dict[str, set[str]] = {}
        for node, parent, cycle in closing_edges(parent_rows):
            text = " is_a ".join(ids[number] for number in cycle)
            if self.report.strict:
                raise MedlinkError(f"is_a cycle: {text}")
            self.report.note("is_a cycles broken", text)
            dropped.setdefault(ids[node], set()).add(ids[parent])
        for node_id, cut in dropped.items():
            kept = tuple(parent for parent in concepts[node_id].parents if parent not in cut)
            concepts[node_id] = replace(concepts[node_id], parents=kept)
        return concepts


def merge_concepts(first: Concept, second: Concept) -> Concept:
    """One concept from two records of the same id; ``first`` keeps its preferred name and definition."""
    names = list(first.names)
    seen = {name.text for name in names}
    for name in second.names:
        if name.text not in seen:
            seen.add(name.text)
            kind = NameKind.EXACT if name.kind is NameKind.PREFERRED else name.kind
            names.append(Name(name.text, kind))
    sources = first.source if second.source in first.source.split("; ") else f"{first.source}; {second.source}"
    return replace(
        first,
        names=tuple(names),
        semantic_types=_union(first.semantic_types, second.semantic_types),
        parents=_union(first.parents, second.parents),
        alt_ids=_union(first.alt_ids, second.alt_ids),
        xrefs=_union(first.xrefs, second.xrefs),
        tree_numbers=_union(first.tree_numbers, second.tree_numbers),
        definition=first.definition or second.definition,
        source=sources.strip("; "),
        relations=first.relations + tuple(r for r in second.relations if r not in first.relations),
    )


def _union(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))
