"""The rows of a vector index: one per distinct normalized text, per source.

Sources (Xu & Bethard §3.2): ``O`` are the terminology's names, ``D`` the annotated training mentions. Names that
normalize alike are one row and are encoded once; the row keeps every concept sharing it, in the terminology's
deterministic order, so a dense match on a shared name reports all of them just as the exact sieve does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from medlink.terminology import Terminology

ONTOLOGY = "O"
MENTIONS = "D"
SOURCES = (ONTOLOGY, MENTIONS)


@dataclass(frozen=True)
class IndexEntry:
    """One encoded text: its normalized key, the text that was encoded, the concepts it names, its source."""

    key: str
    text: str
    concepts: tuple[str, ...]
    source: str
    added: bool = False  # added after the build (``medlink index add``), not from the terminology

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, not {self.source!r}")
        if not self.concepts:
            raise ValueError(f"index entry {self.text!r} has no concept")


def ontology_entries(terminology: Terminology) -> list[IndexEntry]:
    """One entry per distinct normalized name of the terminology, first-seen order."""
    entries = []
    for key in terminology.normalized_names():
        matches = terminology.lookup_normalized(key)
        entries.append(IndexEntry(key, matches[0].name, tuple(m.concept_id for m in matches), ONTOLOGY))
    return entries


def mention_entries(
    pairs: Iterable[tuple[str, Iterable[str]]], terminology: Terminology, source: str = MENTIONS
) -> list[IndexEntry]:
    """Entries for ``(text, concept ids)`` pairs: annotated mentions (source D) or added synonyms (source O).

    Ids are resolved through the terminology; texts whose concepts it does not know are skipped (they could
    never be returned). A text annotated with several concepts keeps them all, the most frequent first."""
    votes: dict[str, dict[str, int]] = {}  # key -> concept -> how many mentions say so, in first-seen order
    text_of: dict[str, str] = {}
    for text, ids in pairs:
        key = terminology.normalizer(text)
        resolved = [r for r in (terminology.resolve(i) for i in ids) if r is not None]
        if not key or not resolved:
            continue
        text_of.setdefault(key, text)
        counts = votes.setdefault(key, {})
        for concept in dict.fromkeys(resolved):
            counts[concept] = counts.get(concept, 0) + 1
    # The concept most mentions of a text were annotated with comes first (a stray annotation of "hemochromatosis"
    # as T-cell lymphoma must not outrank twenty correct ones); ties keep first-seen order.
    return [IndexEntry(key, text_of[key], tuple(sorted(counts, key=lambda c: -counts[c])), source)
            for key, counts in votes.items()]  # fmt: skip
