"""What annotated training documents teach a dictionary annotator, as dictionary-based taggers learn it: the texts
annotators marked as mentions become spans of their own, linked to the concept they were given most often
("nephrotoxicity" → Kidney Diseases in BC5CDR), and the names the dictionary finds in the training documents but
annotators seldom marked ("disease", "included") stop being spans."""

from __future__ import annotations

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
    the training documents say are seldom mentions; ``counts`` says how often each was seen (for reasons)."""

    concepts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    blocked: frozenset[str] = frozenset()
    counts: Mapping[str, int] = field(default_factory=dict)

    def knows(self, key: str) -> bool:
        return key in self.concepts


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
