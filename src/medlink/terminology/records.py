"""The records every terminology source is converted into.

Records validate themselves when they are made, so readers fail at the border and the rest of medlink can trust
them (the way Gilda's ``Term`` refuses empty text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum


class NameKind(StrEnum):
    """How a name relates to its concept. Every kind is linked to; training and ranking may weigh them."""

    PREFERRED = "preferred"
    EXACT = "exact"  # an exact synonym (OBO EXACT, UMLS synonyms, DrugBank synonyms)
    RELATED = "related"
    BROAD = "broad"
    NARROW = "narrow"
    ABBREVIATION = "abbreviation"
    ENTRY_TERM = "entry"  # MeSH entry terms and ICD inclusion terms: synonyms and some narrower terms, unlabelled
    PERMUTED = "permuted"  # a MeSH entry term with its words turned round ("Cancer, Breast")

    @classmethod
    def parse(cls, value: str) -> NameKind:
        try:
            return cls(value.strip().lower())
        except ValueError:
            allowed = ", ".join(kind.value for kind in cls)
            raise ValueError(f"unknown name kind {value!r} (expected one of: {allowed})") from None


@dataclass(frozen=True)
class Name:
    """One name of a concept and its kind."""

    text: str
    kind: NameKind = NameKind.EXACT

    def __post_init__(self) -> None:
        if not self.text or not self.text.strip():
            raise ValueError("a name cannot be empty")


@dataclass(frozen=True)
class Relation:
    """A typed edge ``head --relation--> tail`` between two concept ids (CODER trains on these)."""

    head: str
    relation: str
    tail: str


IS_A = "is_a"


_CONCEPT_ID_RE = re.compile(r"[^\s:]+:\S+")


def validate_concept_id(concept_id: str) -> str:
    """A concept id is namespaced (``MESH:D009203``) and has no whitespace."""
    if not isinstance(concept_id, str) or _CONCEPT_ID_RE.fullmatch(concept_id) is None:
        raise ValueError(f"invalid concept id {concept_id!r}: expected NAMESPACE:ID without spaces, e.g. MESH:D009203")
    return concept_id


@dataclass(frozen=True)
class Concept:
    """A concept of a terminology.

    Attributes:
        id: namespaced id, e.g. ``MESH:D009203``.
        preferred_name: the source's preferred name; also present in ``names`` with kind ``preferred``.
        names: every name, the preferred one first.
        semantic_types: semantic types or categories (UMLS TUIs, MeSH tree branches, OBO namespaces).
        parents: ids of the concepts this one ``is_a``.
        alt_ids: other ids that mean this same concept (OBO ``alt_id``, CTD's OMIM ids, merged ids).
        xrefs: ids in other vocabularies this concept maps to (not resolved as this concept).
        tree_numbers: tree numbers or codes where the source has them (MeSH ``C14.280.647.500``).
        definition: the source's definition, if any.
        source: the vocabulary and version the concept came from, e.g. ``MeSH descriptors``.
    """

    id: str
    preferred_name: str
    names: tuple[Name, ...] = ()
    semantic_types: tuple[str, ...] = ()
    parents: tuple[str, ...] = ()
    alt_ids: tuple[str, ...] = ()
    xrefs: tuple[str, ...] = ()
    tree_numbers: tuple[str, ...] = ()
    definition: str | None = None
    source: str = ""
    relations: tuple[Relation, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        validate_concept_id(self.id)
        if not self.preferred_name or not self.preferred_name.strip():
            raise ValueError(f"concept {self.id} has no preferred name")
        if self.names and self.names[0] != Name(self.preferred_name, NameKind.PREFERRED):
            raise ValueError(f"concept {self.id}: names must start with the preferred name")
        if not self.names:
            object.__setattr__(self, "names", (Name(self.preferred_name, NameKind.PREFERRED),))


def make_concept(
    concept_id: str,
    preferred_name: str,
    synonyms: list[Name] | tuple[Name, ...] = (),
    **fields: object,
) -> Concept:
    """Build a concept with its preferred name first and synonyms after, dropping repeats of the same text."""
    names = [Name(preferred_name.strip(), NameKind.PREFERRED)]
    seen = {names[0].text}
    for name in synonyms:
        text = name.text.strip()
        if text and text not in seen:
            seen.add(text)
            names.append(Name(text, name.kind))
    return Concept(id=concept_id, preferred_name=names[0].text, names=tuple(names), **fields)  # type: ignore[arg-type]
