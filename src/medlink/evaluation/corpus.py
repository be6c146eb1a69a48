"""Annotated mentions as the scorer sees them.

A gold label is a tuple of *parts*; each part is the set of ids acceptable for it:

- ``D009203``            one part, one id
- ``D001943+D010051``    one part, either id is right (PubTator's ``+``: alternatives)
- ``D001943|D010051``    two parts, both must be found (``|``: a composite mention, one id per part)
- ``-1`` (or empty)      no parts: the mention is nil, out of the terminology
- CHIP-CDN's ``a##b``    two parts: the mention maps to several concepts, all of which must be predicted
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from medlink.errors import MedlinkError

if TYPE_CHECKING:
    from medlink.index import IndexEntry
    from medlink.terminology import Terminology

NIL_IDS = frozenset({"-1", "", "CUI-less", "NIL"})


@dataclass(frozen=True)
class Gold:
    """The correct answer for one mention: parts, each a sorted tuple of alternative ids."""

    parts: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, parts: Iterable[Iterable[str]]) -> Gold:
        cleaned = tuple(tuple(sorted(set(alternatives))) for alternatives in parts)
        return cls(tuple(part for part in cleaned if part))

    @property
    def is_nil(self) -> bool:
        return not self.parts

    @property
    def has_several_parts(self) -> bool:
        return len(self.parts) > 1

    def ids(self) -> frozenset[str]:
        """Every id mentioned anywhere in the label."""
        return frozenset(identifier for part in self.parts for identifier in part)

    def __str__(self) -> str:
        return "|".join("+".join(part) for part in self.parts) if self.parts else "NIL"


@dataclass(frozen=True)
class GoldMention:
    """An annotated mention, with its document when the corpus has one (for abbreviation expansion)."""

    text: str
    gold: Gold
    document_id: str | None = None
    document: str | None = None
    start: int | None = None
    end: int | None = None
    entity_type: str | None = None


@dataclass(frozen=True)
class Corpus:
    """A named list of gold mentions (one split of one dataset)."""

    name: str
    mentions: tuple[GoldMention, ...]
    notes: tuple[str, ...] = ()  # what the reader had to do to the data, e.g. labels it could not resolve
    documents: tuple[tuple[str, str], ...] = ()  # (id, text) of every document, those without mentions too

    def __len__(self) -> int:
        return len(self.mentions)

    def __iter__(self) -> Iterator[GoldMention]:
        return iter(self.mentions)

    def with_type(self, entity_type: str | None) -> Corpus:
        """Only mentions of one entity type (``Disease``, ``Chemical``); all of them for ``None``. A type no mention
        has is an error that lists the types the corpus has, not an empty corpus scored 0."""
        if entity_type is None:
            return self
        wanted = entity_type.casefold()
        kept = tuple(m for m in self.mentions if (m.entity_type or "").casefold() == wanted)
        if self.mentions and not kept:
            present = sorted({m.entity_type for m in self.mentions if m.entity_type})
            raise MedlinkError(
                f"{self.name} has no mention of type {entity_type!r}; its types are: "
                f"{', '.join(present) or 'none (its mentions carry no type)'}"
            )
        return Corpus(f"{self.name} [{entity_type}]", kept, self.notes, self.documents)

    def without_fold(self, fold: int, folds: int) -> Corpus:
        """The mentions outside one cross-fitting fold (:func:`medlink.evaluation.folds.fold_of`)."""
        from medlink.evaluation.folds import fold_of

        kept = tuple(m for m in self.mentions if fold_of(m.text, folds) != fold)
        return Corpus(f"{self.name} [without fold {fold} of {folds}]", kept, self.notes, self.documents)

    def labelled_pairs(self) -> list[tuple[str, tuple[str, ...]]]:
        """``(text, acceptable ids)`` of every mention with one concept: what training and D-search learn from
        (composite and nil mentions have no single concept to point at)."""
        return [(m.text, m.gold.parts[0]) for m in self.mentions if len(m.gold.parts) == 1]

    def several_pairs(self) -> list[tuple[str, tuple[tuple[str, ...], ...]]]:
        """``(text, parts)`` of every mention annotated with several concepts: the D-search memory of texts that
        name them all at once (:func:`medlink.index.mention_entries`)."""
        return [(m.text, m.gold.parts) for m in self.mentions if len(m.gold.parts) > 1]

    def index_entries(self, terminology: Terminology) -> list[IndexEntry]:
        """The index entries (source D) its mentions make: one per distinct text, those annotated with several
        concepts at once included (:func:`medlink.index.mention_entries`)."""
        from medlink.index import mention_entries  # not at import: numpy and FAISS's wrapper cost 0.1 s

        return mention_entries(self.labelled_pairs(), terminology, several=self.several_pairs())

    def counted_pairs(self) -> list[tuple[str, tuple[str, ...], int]]:
        """``(text, acceptable ids of the first part, number of parts)`` of every mention that is not nil: what the
        concept-count head learns from (a composite mention names as many concepts as it has parts)."""
        return [(m.text, m.gold.parts[0], len(m.gold.parts)) for m in self.mentions if m.gold.parts]

    def gold_ids(self) -> frozenset[str]:
        return frozenset(identifier for mention in self.mentions for identifier in mention.gold.ids())


def parse_pubtator_ids(field: str, namespace: str | None) -> Gold:
    """``D1|D2`` composite parts, ``D1+D2`` alternatives, ``-1`` nil; bare ids get ``namespace``."""
    field = field.strip()
    if field in NIL_IDS:
        return Gold(())
    parts = []
    for part in field.split("|"):
        alternatives = [with_namespace(i, namespace) for i in part.split("+") if i.strip() and i.strip() not in NIL_IDS]
        parts.append(alternatives)
    return Gold.of(parts)


def with_namespace(identifier: str, namespace: str | None) -> str:
    identifier = identifier.strip()
    if namespace is None or ":" in identifier:
        return identifier
    return f"{namespace}:{identifier}"
