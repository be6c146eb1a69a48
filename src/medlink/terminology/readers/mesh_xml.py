"""The official NLM MeSH XML files: descriptors (``descYYYY.xml``) and supplementary concepts (``suppYYYY.xml``).

Follows NLM's DTDs (``nlmdescriptorrecordset``, ``nlmsupplementalrecordset``). Names are every ``Term/String``
of every concept in a record: the preferred concept's terms are entry terms, a sub-concept's terms take their kind
from its ``ConceptRelation`` to the preferred concept (NRW → narrow, BRD → broad, REL → related), and terms tagged
``ABB``/``ACR`` are abbreviations; the preferred concept's permuted terms (its entry terms with their words turned
round) are of kind ``permuted``, as in :mod:`medlink.terminology.readers.mesh_terms`. Descriptors get their
hierarchy from tree numbers; supplementary concepts get the descriptors they are mapped to (``HeadingMappedTo``) as
parents. Pharmacological actions become ``pharmacological_action`` relations. Parsed incrementally: the 300 MB
descriptor file is never held in memory as a tree.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.terminology.readers.concepts import build_concept, namespaced
from medlink.terminology.readers.mesh_tsv import categories_of, parents_from_tree_numbers
from medlink.terminology.readers.source_files import open_binary
from medlink.terminology.records import Concept, NameKind, Relation

_RELATION_KINDS = {"NRW": NameKind.NARROW, "BRD": NameKind.BROAD, "REL": NameKind.RELATED}
ABBREVIATION_TAGS = frozenset({"ABB", "ACR"})
_SCR_CLASSES = {"1": "Chemical", "2": "Protocol", "3": "Rare disease", "4": "Organism"}
_RECORDS = {"DescriptorRecord": "Descriptor", "SupplementalRecord": "SupplementalRecord"}


def read_mesh_xml(path: Path, report: ReadReport, source: str | None = None) -> Iterator[Concept]:
    descriptors: list[Concept] = []
    for record_type, record in _records(path):
        concept = _concept(record, record_type, path, report, source)
        record.clear()
        if concept is None:
            continue
        if record_type == "Descriptor":
            descriptors.append(concept)  # parents need every tree number first
        else:
            yield concept
    parents = parents_from_tree_numbers({concept.id: concept.tree_numbers for concept in descriptors})
    for concept in descriptors:
        yield Concept(**{**vars(concept), "parents": parents[concept.id]})


def _records(path: Path) -> Iterator[tuple[str, ET.Element]]:
    try:
        with open_binary(path) as handle:
            for _event, element in ET.iterparse(handle, events=("end",)):
                if element.tag in _RECORDS:
                    yield _RECORDS[element.tag], element
    except ET.ParseError as error:
        raise SourceError(path, f"malformed XML ({error})", error.position[0]) from None


def _text(element: ET.Element | None, path: str) -> str:
    found = element.find(path) if element is not None else None
    return (found.text or "").strip() if found is not None and found.text else ""


def _concept(
    record: ET.Element, record_type: str, path: Path, report: ReadReport, source: str | None
) -> Concept | None:
    identifier = _text(record, f"{record_type}UI")
    preferred = _text(record, f"{record_type}Name/String")
    names: list[tuple[str, NameKind]] = []
    semantic_types: list[str] = []
    definition = None
    for concept in record.iterfind("ConceptList/Concept"):
        is_preferred = concept.get("PreferredConceptYN") == "Y"
        relation = concept.find("ConceptRelationList/ConceptRelation")
        concept_kind = NameKind.ENTRY_TERM
        if not is_preferred and relation is not None:
            concept_kind = _RELATION_KINDS.get(relation.get("RelationName", ""), NameKind.RELATED)
        if is_preferred:
            definition = _text(concept, "ScopeNote") or None
        for term in concept.iterfind("TermList/Term"):
            kind = concept_kind
            if term.get("LexicalTag") in ABBREVIATION_TAGS:
                kind = NameKind.ABBREVIATION
            elif term.get("IsPermutedTermYN") == "Y" and concept_kind is NameKind.ENTRY_TERM:
                kind = NameKind.PERMUTED
            names.append((_text(term, "String"), kind))
        semantic_types.extend(_text(st, "SemanticTypeName") for st in concept.iterfind("SemanticTypeList/SemanticType"))
    tree_numbers = tuple(number.text.strip() for number in record.iterfind("TreeNumberList/TreeNumber") if number.text)
    concept_id = namespaced(identifier, "MESH")
    if record_type == "Descriptor":
        semantic_types = [*categories_of(tree_numbers), *semantic_types]
        parents: tuple[str, ...] = ()
        default_source = "MeSH descriptors (XML)"
    else:
        scr_class = _SCR_CLASSES.get(record.get("SCRClass", ""))
        semantic_types = [scr_class, *semantic_types] if scr_class else semantic_types
        parents = tuple(
            namespaced(_text(heading, "DescriptorReferredTo/DescriptorUI").lstrip("*"), "MESH")
            for heading in record.iterfind("HeadingMappedToList/HeadingMappedTo")
        )
        default_source = "MeSH supplementary concepts (XML)"
    actions = tuple(
        Relation(
            concept_id, "pharmacological_action", namespaced(_text(action, "DescriptorReferredTo/DescriptorUI"), "MESH")
        )
        for action in record.iterfind("PharmacologicalActionList/PharmacologicalAction")
    )
    names = [(text, kind) for text, kind in names if text != preferred]
    return build_concept(
        report,
        path,
        None,
        concept_id,
        preferred,
        names,
        tree_numbers=tree_numbers,
        semantic_types=tuple(dict.fromkeys(t for t in semantic_types if t)),
        parents=parents,
        definition=definition,
        source=source or default_source,
        relations=actions,
    )
