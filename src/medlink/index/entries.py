"""The rows of a vector index: one per distinct normalized text, per source.

Sources (Xu & Bethard §3.2): ``O`` are the terminology's names, ``D`` the annotated training mentions. Names that
normalize alike are one row and are encoded once; the row keeps every concept sharing it, in the terminology's
deterministic order, so a dense match on a shared name reports all of them just as the exact sieve does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
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
    several: bool = False  # an annotated mention naming all its concepts at once, not alternatives (see below)

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, not {self.source!r}")
        if not self.concepts:
            raise ValueError(f"index entry {self.text!r} has no concept")


def ontology_entries(terminology: Terminology) -> list[IndexEntry]:
    """One entry per distinct normalized name of the terminology, first-seen order: the text of the name an exact
    lookup explains it by, and the concepts that lookup answers, in its order."""
    from medlink.terminology.name_groups import name_groups

    return [IndexEntry(key, text, concepts, ONTOLOGY) for key, text, concepts in name_groups(terminology)]


def mention_entries(
    pairs: Iterable[tuple[str, Iterable[str]]],
    terminology: Terminology,
    source: str = MENTIONS,
    several: Iterable[tuple[str, Sequence[Sequence[str]]]] = (),
) -> list[IndexEntry]:
    """Entries for ``(text, concept ids)`` pairs: annotated mentions (source D) or added synonyms (source O).

    Ids are resolved through the terminology; texts whose concepts it does not know are skipped (they could
    never be returned). A text annotated with several concepts keeps them all, the most frequent first.

    ``several`` are mentions annotated with several concepts at once, ``(text, parts)`` with the acceptable ids
    of each part: BC5CDR gives "hemorrhagic cystitis" Hemorrhage *and* Cystitis, as MeSH has no concept for it.
    A text annotated so more often than with one concept becomes one entry claiming them all (``several``), so
    the exact sieve answers the same text with the same set (Liang et al. 2021: mentions of several concepts)."""
    votes: dict[str, dict[str, int]] = {}  # key -> concept -> how many mentions say so, in first-seen order
    text_of: dict[str, str] = {}
    mentions_of: Counter[str] = Counter()
    for text, ids in pairs:
        key = terminology.normalizer(text)
        resolved = [r for r in (terminology.resolve(i) for i in ids) if r is not None]
        if not key or not resolved:
            continue
        text_of.setdefault(key, text)
        mentions_of[key] += 1
        counts = votes.setdefault(key, {})
        for concept in dict.fromkeys(resolved):
            counts[concept] = counts.get(concept, 0) + 1
    sets = _several_concept_sets(several, terminology)
    claimed = {key: (text, concepts) for key, (text, concepts, count) in sets.items() if count > mentions_of[key]}
    # The concept most mentions of a text were annotated with comes first (a stray annotation of "hemochromatosis"
    # as T-cell lymphoma must not outrank twenty correct ones); ties keep first-seen order.
    single = [
        IndexEntry(key, text_of[key], tuple(sorted(counts, key=lambda c: -counts[c])), source)
        for key, counts in votes.items()
        if key not in claimed
    ]
    return single + [IndexEntry(key, text, concepts, source, several=True) for key, (text, concepts) in claimed.items()]


def _several_concept_sets(
    annotations: Iterable[tuple[str, Sequence[Sequence[str]]]], terminology: Terminology
) -> dict[str, tuple[str, tuple[str, ...], int]]:
    """Per normalized text, its most frequent set of concepts and how many mentions gave it. A mention counts
    only when every part resolves and at least two distinct concepts remain (a part the terminology lacks would
    make the set wrong)."""
    found: dict[str, tuple[str, Counter[tuple[str, ...]]]] = {}
    for text, parts in annotations:
        key = terminology.normalizer(text)
        concepts = [next((r for r in (terminology.resolve(i) for i in part) if r), None) for part in parts]
        distinct = tuple(dict.fromkeys(c for c in concepts if c))
        if key and None not in concepts and len(distinct) > 1:
            found.setdefault(key, (text, Counter()))[1][distinct] += 1
    return {key: (text, *counts.most_common(1)[0]) for key, (text, counts) in found.items()}
