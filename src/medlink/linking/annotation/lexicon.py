"""What annotated training documents teach a dictionary annotator, as dictionary-based taggers learn it: the texts
annotators marked as mentions become spans of their own, linked to the concept they were given most often
("nephrotoxicity" → Kidney Diseases in BC5CDR), and the names the dictionary finds in the training documents but
annotators seldom marked ("disease", "included") stop being spans."""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

MIN_SEEN = 2  # a name found this often in the training documents is judged by them
MIN_PRECISION = 0.5  # ... and kept when at least this share of those finds were annotated mentions


@dataclass(frozen=True)
class TrainingMention:
    """A mention of a training document: where it is, its normalized text, and the concepts annotators gave it."""

    start: int
    end: int
    key: str
    concepts: tuple[str, ...]


@dataclass(frozen=True)
class Lexicon:
    """``concepts``: normalized text → the concepts annotators gave it most often; ``blocked``: normalized names
    the training documents say are seldom mentions; ``counts`` says how often each was seen, ``reasons`` (where
    given) why each text is taught."""

    concepts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    blocked: frozenset[str] = frozenset()
    counts: Mapping[str, int] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)
    cased: frozenset[str] = frozenset()  # texts taught only where written without a small letter ("PAN", not "pan")

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """Every word of the texts it teaches."""
        return frozenset(word for key in self.concepts for word in key.split())

    def teaches(self, key: str, text: str, around: str = "") -> bool:
        """Whether ``text`` (normalized ``key``) is a lesson of this lexicon where it is written so; ``around``:
        the text about it, which for a capitals-only lesson must have small letters (a note written in capitals
        throughout says nothing by its capitals)."""
        if key not in self.concepts:
            return False
        return key not in self.cased or (not has_small_letter(text) and has_small_letter(around or "a"))

    def knows(self, key: str) -> bool:
        return key in self.concepts

    def reason(self, key: str) -> str:
        if key in self.reasons:
            return self.reasons[key]
        count = self.counts.get(key, 0)
        return f"annotated so in the training documents ({'once' if count == 1 else f'{count} times'})"

    def under(self, own: Lexicon) -> Lexicon:
        """This lexicon with ``own`` (a user's training documents) over it: where they disagree, ``own`` wins, both
        in what a text means and in whether a name is a span."""
        if not self.concepts and not self.blocked:
            return own
        if not own.concepts and not own.blocked:
            return self
        concepts = {key: value for key, value in self.concepts.items() if key not in own.blocked}
        concepts.update(own.concepts)
        return Lexicon(
            concepts,
            frozenset((self.blocked - own.concepts.keys()) | own.blocked),
            {**self.counts, **own.counts},
            {**{key: text for key, text in self.reasons.items() if key not in own.concepts}, **own.reasons},
            (self.cased - own.concepts.keys()) | own.cased,
        )


FoundSpans = Mapping[str, list[tuple[int, int, str]]]  # document id → (start, end, normalized key) of each span


def learn_lexicon(mentions: Iterable[tuple[str, TrainingMention]], found_spans: FoundSpans) -> Lexicon:
    """``mentions``: (document id, mention) pairs; ``found_spans``: document id → (start, end, normalized key) of
    every span the dictionary finds in that document."""
    given: dict[str, Counter] = defaultdict(Counter)
    gold_spans: set[tuple[str, int, int]] = set()
    for document_id, mention in mentions:
        if mention.key and mention.concepts:
            given[mention.key][mention.concepts] += 1
            gold_spans.add((document_id, mention.start, mention.end))
    seen: Counter = Counter()
    marked: Counter = Counter()
    for document_id, spans in found_spans.items():
        for start, end, key in spans:
            seen[key] += 1
            marked[key] += (document_id, start, end) in gold_spans
    blocked = frozenset(key for key, n in seen.items() if n >= MIN_SEEN and marked[key] / n < MIN_PRECISION)
    concepts = {key: counts.most_common(1)[0][0] for key, counts in given.items()}
    return Lexicon(concepts, blocked, {key: sum(counts.values()) for key, counts in given.items()})


def has_small_letter(text: str) -> bool:
    return any(c.islower() for c in text)
