"""An in-memory terminology: concepts, their names and relations, with navigation and normalized-name lookup.

Storage is columnar. A compiled terminology arrives as memory-mapped Arrow columns with its lookup tables on disk
(:class:`Lookups`: id → row, normalized name → names), so that one of the UMLS's size loads at once and answers
lookups without a Python object per name; a column becomes a Python list only when something reads all of it.
Built in memory, the lookup tables are dictionaries made on first use. :class:`Concept` records are made on demand
and never stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from medlink.terminology.columns import Columns
from medlink.terminology.key_table import KeyTable
from medlink.terminology.name_statistics import NameStatistics, name_statistics
from medlink.terminology.point_reads import FileArray, FileKeyTable
from medlink.terminology.records import IS_A, Concept, Name, NameKind, Relation
from medlink.text import Normalizer

CONCEPT_FIELDS = (
    "id",
    "preferred_name",
    "semantic_types",
    "parents",
    "alt_ids",
    "xrefs",
    "tree_numbers",
    "definition",
    "source",
)
NAME_FIELDS = ("concept", "text", "kind", "norm")
RELATION_FIELDS = ("head", "relation", "tail")

# Which name explains an exact match best when several concepts share a normalized name.
KIND_RANK = {
    NameKind.PREFERRED: 0,
    NameKind.EXACT: 1,
    NameKind.ENTRY_TERM: 2,
    NameKind.PERMUTED: 3,
    NameKind.ABBREVIATION: 4,
    NameKind.RELATED: 5,
    NameKind.NARROW: 6,
    NameKind.BROAD: 7,
}


@dataclass(frozen=True)
class SourceInfo:
    """Where part of a terminology came from; ``sha256`` lets an index notice that its terminology changed."""

    path: str
    format: str
    sha256: str
    size: int
    concepts: int
    release: str = ""  # the release as its files name it ("2026" for desc2026.xml, "2025AA" for a UMLS folder)


@dataclass(frozen=True)
class NameMatch:
    """A concept whose name normalizes to the looked-up key."""

    concept_id: str
    name: str
    kind: NameKind


@dataclass(frozen=True)
class Lookups:
    """The lookup tables a compiled terminology keeps on disk (see :mod:`medlink.terminology.store`)."""

    ids: KeyTable | FileKeyTable  # own ids first, then alternative ids → concept row
    norms: KeyTable | FileKeyTable  # normalized name → name row
    name_offsets: Any  # names of concept row r are name rows offsets[r]:offsets[r + 1]
    relation_heads: KeyTable | FileKeyTable | None = None  # relation head → relation rows (None: older stores)


@dataclass
class Terminology:
    """Concepts with names and relations. Build with :meth:`from_concepts`, load with :func:`load_terminology`."""

    concepts: Columns
    names: Columns
    relations_table: Columns
    sources: tuple[SourceInfo, ...] = ()
    normalizer: Normalizer = field(default_factory=Normalizer)
    lookups: Lookups | None = None

    # --- construction -------------------------------------------------------------------------------------------

    @classmethod
    def from_concepts(
        cls,
        concepts: Iterable[Concept],
        relations: Iterable[Relation] = (),
        sources: Sequence[SourceInfo] = (),
        normalizer: Normalizer | None = None,
    ) -> Terminology:
        """Columnar terminology from records; ids must be unique (use :class:`TerminologyBuilder` to merge)."""
        normalizer = normalizer or Normalizer()
        concept_cols: dict[str, list] = {name: [] for name in CONCEPT_FIELDS}
        name_cols: dict[str, list] = {name: [] for name in NAME_FIELDS}
        relation_list = list(relations)
        for row, concept in enumerate(concepts):
            for column in CONCEPT_FIELDS:
                value = getattr(concept, column)
                concept_cols[column].append(list(value) if isinstance(value, tuple) else value)
            for name in concept.names:
                name_cols["concept"].append(row)
                name_cols["text"].append(name.text)
                name_cols["kind"].append(name.kind.value)
            relation_list.extend(concept.relations)
        name_cols["norm"] = normalizer.normalize_all(name_cols["text"])
        relation_cols = {
            "head": [r.head for r in relation_list],
            "relation": [r.relation for r in relation_list],
            "tail": [r.tail for r in relation_list],
        }
        return cls(Columns(concept_cols), Columns(name_cols), Columns(relation_cols), tuple(sources), normalizer)

    # --- size and iteration ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.concepts)

    @property
    def name_count(self) -> int:
        return len(self.names)

    def __contains__(self, concept_id: object) -> bool:
        return isinstance(concept_id, str) and self.resolve(concept_id) is not None

    def __iter__(self) -> Iterator[Concept]:
        return (self._concept_at(row) for row in range(len(self)))

    @property
    def ids(self) -> list[str]:
        return self.concepts["id"]

    # --- lookup by id ---------------------------------------------------------------------------------------

    @cached_property
    def _row_of_id(self) -> dict[str, int]:
        return {concept_id: row for row, concept_id in enumerate(self.concepts["id"])}

    @cached_property
    def _row_of_alt_id(self) -> dict[str, int]:
        rows: dict[str, int] = {}
        for row, alt_ids in enumerate(self.concepts["alt_ids"]):
            for alt_id in alt_ids or ():
                rows.setdefault(alt_id, row)
        return rows

    def _row(self, concept_id: str) -> int | None:
        if self.lookups is not None:
            rows = [int(row) for row in self.lookups.ids.candidates(concept_id)]
            own = next((row for row in rows if self.concepts.at("id", row) == concept_id), None)
            return (
                own
                if own is not None
                else next((row for row in rows if concept_id in (self.concepts.at("alt_ids", row) or ())), None)
            )
        row = self._row_of_id.get(concept_id)
        return row if row is not None else self._row_of_alt_id.get(concept_id)

    def resolve(self, concept_id: str) -> str | None:
        """The concept's own id, following alternative ids (``OMIM:…`` in MEDIC); ``None`` if unknown."""
        row = self._row(concept_id)
        return None if row is None else self.concepts.at("id", row)

    def concept(self, concept_id: str) -> Concept:
        """The concept with this id or alternative id; ``KeyError`` if unknown."""
        row = self._row(concept_id)
        if row is None:
            raise KeyError(f"no concept {concept_id!r} in this terminology")
        return self._concept_at(row)

    def get(self, concept_id: str) -> Concept | None:
        row = self._row(concept_id)
        return None if row is None else self._concept_at(row)

    @cached_property
    def _name_offsets(self) -> Sequence[int] | FileArray:
        """Names are stored grouped by concept: names of row r are ``offsets[r]:offsets[r + 1]``."""
        if self.lookups is not None:
            return self.lookups.name_offsets
        offsets = [0] * (len(self) + 1)
        for row in self.names["concept"]:
            offsets[row + 1] += 1
        for row in range(len(self)):
            offsets[row + 1] += offsets[row]
        return offsets

    def _names_at(self, row: int) -> tuple[Name, ...]:
        start, end = (int(v) for v in self._name_offsets[row : row + 2])  # one read on disk
        at = self.names.at
        return tuple(Name(at("text", i), NameKind(at("kind", i))) for i in range(start, end))

    def _concept_at(self, row: int) -> Concept:
        values = {column: self.concepts.at(column, row) for column in CONCEPT_FIELDS}
        for column in ("semantic_types", "parents", "alt_ids", "xrefs", "tree_numbers"):
            values[column] = tuple(values[column] or ())
        return Concept(names=self._names_at(row), relations=tuple(self.relations(values["id"])), **values)

    def concept_preferred_name(self, concept_id: str) -> str:
        row = self._row(concept_id)
        if row is None:
            raise KeyError(f"no concept {concept_id!r} in this terminology")
        return self.concepts.at("preferred_name", row)

    def names_of(self, concept_id: str) -> tuple[Name, ...]:
        row = self._row(concept_id)
        if row is None:
            raise KeyError(f"no concept {concept_id!r} in this terminology")
        return self._names_at(row)

    # --- lookup by name ------------------------------------------------------------------------------------

    @cached_property
    def _names_of_norm(self) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for name_row, norm in enumerate(self.names["norm"]):
            if norm:
                index.setdefault(norm, []).append(name_row)
        return index

    @cached_property
    def name_words(self) -> frozenset[str]:
        """Every word of every normalized name: a text's word outside this set is in no name (annotation skips
        the spans that hold one without normalizing them). Read from the names' column in Arrow: through the
        in-memory name index it cost 150 MB for MeSH, in every worker process of a service."""
        import pyarrow as pa
        import pyarrow.compute as pc

        norms = self.names.arrow("norm", pa.string())
        words = pc.unique(pc.list_flatten(pc.utf8_split_whitespace(norms.drop_null())))
        found = frozenset(words.to_pylist()) - {""}
        del norms, words
        pa.default_memory_pool().release_unused()
        return found

    def normalized_names(self) -> list[str]:
        """Every distinct normalized name, in first-seen order: what a dense index needs to encode."""
        return list(self._names_of_norm)

    def lookup(self, text: str) -> list[NameMatch]:
        """Concepts with a name that normalizes like ``text``, best explained first, one entry per concept.

        Order: the kind of the matching name (preferred before synonyms before broader terms), then concept id,
        so ambiguity is reported in a stable order rather than broken at random.
        """
        return self.lookup_normalized(self.normalizer(text))

    def _name_rows(self, key: str) -> Sequence[int]:
        if self.lookups is None:
            return self._names_of_norm.get(key, ())
        return [int(row) for row in self.lookups.norms.candidates(key) if self.names.at("norm", int(row)) == key]

    def has_normalized(self, key: str) -> bool:
        return bool(self._name_rows(key))

    def may_have_normalized(self, key: str) -> bool:
        """False where no name has this key, answered from key hashes in memory without reading a name (the key
        table's ``may_hold``); True means ask :meth:`has_normalized`. For callers that ask about many keys, nearly
        all absent: annotation tries every run of words of a text."""
        return self.lookups is None or self.lookups.norms.may_hold(key)

    def names_written(self, key: str) -> list[str]:
        """Every name that normalizes to ``key``, as the terminology writes it."""
        return [self.names.at("text", row) for row in self._name_rows(key)]

    @cached_property
    def name_statistics(self) -> NameStatistics:
        """How its names are written, as a whole (what annotation asks: capitals, category words)."""
        return name_statistics(self.names)

    def lookup_normalized(self, key: str) -> list[NameMatch]:
        best: dict[int, tuple[int, NameKind]] = {}
        at = self.names.at
        for name_row in self._name_rows(key):
            row, kind = at("concept", name_row), NameKind(at("kind", name_row))
            current = best.get(row)
            if current is None or KIND_RANK[kind] < KIND_RANK[current[1]]:
                best[row] = (name_row, kind)
        matches = [
            NameMatch(self.concepts.at("id", row), at("text", name_row), kind) for row, (name_row, kind) in best.items()
        ]
        matches.sort(key=lambda match: (KIND_RANK[match.kind], match.concept_id))
        return matches

    # --- hierarchy and relations --------------------------------------------------------------------------

    def parents(self, concept_id: str) -> tuple[str, ...]:
        row = self._row(concept_id)
        if row is None:
            raise KeyError(f"no concept {concept_id!r} in this terminology")
        return tuple(self.concepts.at("parents", row) or ())

    def tree_numbers(self, concept_id: str) -> tuple[str, ...]:
        """The concept's places in the hierarchy (MeSH tree numbers); read alone, without the whole concept."""
        row = self._row(concept_id)
        if row is None:
            raise KeyError(f"no concept {concept_id!r} in this terminology")
        return tuple(self.concepts.at("tree_numbers", row) or ())

    @cached_property
    def _children(self) -> dict[str, list[str]]:
        children: dict[str, list[str]] = {}
        for concept_id, parents in zip(self.concepts["id"], self.concepts["parents"], strict=True):
            for parent in parents or ():
                children.setdefault(parent, []).append(concept_id)
        return children

    def children(self, concept_id: str) -> tuple[str, ...]:
        resolved = self.resolve(concept_id)
        return tuple(sorted(self._children.get(resolved, ()))) if resolved else ()

    def siblings(self, concept_id: str) -> tuple[str, ...]:
        """Concepts sharing a parent with this one (DILBERT's sibling negatives), excluding itself."""
        resolved = self.resolve(concept_id)
        siblings = {child for parent in self.parents(concept_id) for child in self._children.get(parent, ())}
        siblings.discard(resolved)
        return tuple(sorted(siblings))

    def ancestors(self, concept_id: str) -> tuple[str, ...]:
        """All concepts above this one, nearest first (breadth-first); safe on cyclic input."""
        seen: dict[str, None] = {}
        frontier = list(self.parents(concept_id))
        while frontier:
            next_frontier: list[str] = []
            for parent in frontier:
                if parent not in seen and parent in self:
                    seen[parent] = None
                    next_frontier.extend(self.parents(parent))
            frontier = next_frontier
        return tuple(seen)

    @cached_property
    def _relations_of_head(self) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for row, head in enumerate(self.relations_table["head"]):
            index.setdefault(head, []).append(row)
        return index

    def relations(self, concept_id: str | None = None) -> list[Relation]:
        """Typed relation triples (not ``is_a``, which :meth:`parents` holds); all of them when no id is given."""
        if concept_id is None:
            heads, relations, tails = (self.relations_table[column] for column in RELATION_FIELDS)
            return [Relation(*triple) for triple in zip(heads, relations, tails, strict=True)]
        at = self.relations_table.at
        return [
            Relation(at("head", row), at("relation", row), at("tail", row)) for row in self._relation_rows(concept_id)
        ]

    def _relation_rows(self, concept_id: str) -> Sequence[int]:
        """A compiled store looks the head up on disk; otherwise every relation is indexed by head once."""
        heads = self.lookups.relation_heads if self.lookups is not None else None
        if heads is None:
            return self._relations_of_head.get(concept_id, ())
        return [
            int(row) for row in heads.candidates(concept_id) if self.relations_table.at("head", int(row)) == concept_id
        ]

    def is_a_triples(self) -> Iterator[Relation]:
        for concept_id, parents in zip(self.concepts["id"], self.concepts["parents"], strict=True):
            for parent in parents or ():
                yield Relation(concept_id, IS_A, parent)

    # --- summaries ----------------------------------------------------------------------------------------

    def fingerprint(self) -> str:
        """Identifies this terminology's content for indexes built from it: the checksums of its source files
        when it was compiled from files, else a hash of its ids and names; the normalizer is part of it."""
        import hashlib

        digest = hashlib.sha256(self.normalizer.fingerprint.encode())
        if self.sources and all(source.sha256 for source in self.sources):
            for source in self.sources:
                digest.update(f"{source.format}:{source.sha256}\n".encode())
        else:
            for concept_id in self.concepts["id"]:
                digest.update(concept_id.encode() + b"\n")
            for text in self.names["text"]:
                digest.update(text.encode() + b"\n")
        digest.update(f"{len(self)}:{self.name_count}".encode())
        return digest.hexdigest()[:16]

    def name_counts_by_kind(self) -> Counter[str]:
        return Counter(self.names["kind"])

    def concept_counts_by_namespace(self) -> Counter[str]:
        return Counter(concept_id.partition(":")[0] for concept_id in self.concepts["id"])
