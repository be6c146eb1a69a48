"""Training examples: (text, concept) pairs from a terminology's names (O) and, optionally, annotated mentions (D).

Xu & Bethard §4.2 train on the ontology alone (O) or on ontology plus mentions (OD), repeating the mentions so
that |D| / |O| = 1/3: mentions are few but are the distribution linking meets. Concept ids become integer labels.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from medlink.terminology import Terminology

MENTION_SHARE = 1 / 3


@dataclass(frozen=True)
class Examples:
    texts: tuple[str, ...]
    labels: tuple[int, ...]
    concepts: tuple[str, ...]  # label -> concept id
    parents: tuple[tuple[str, ...], ...] = ()  # label -> the concept's parent ids (for sibling batches)
    relations: tuple[tuple[int, str, int], ...] = ()  # (head label, relation, tail label): is_a and typed relations
    counts: tuple[int, ...] = ()  # row -> how many concepts the mention names; 0 for a terminology name (no
    # mention to learn a count from). Empty when no counts were given.

    def __len__(self) -> int:
        return len(self.texts)


def training_examples(
    terminology: Terminology,
    mentions: Iterable[tuple[str, str]] = (),
    mention_share: float = MENTION_SHARE,
    max_names_per_concept: int | None = None,
    seed: int = 0,
    mention_counts: Sequence[int] | None = None,
) -> Examples:
    """Names of every concept with at least two distinct names (a single name has no positive to learn from) or
    with a mention (the mention is its name's positive: ICD-10 has one name per code), plus ``mentions`` (text,
    concept id) repeated to make up ``mention_share`` of the names' count.

    ``mention_counts`` (one per mention: how many concepts it names) fills :attr:`Examples.counts` for the
    concept-count head."""
    mentions = list(mentions)
    if mention_counts is not None and len(mention_counts) != len(mentions):
        raise ValueError(f"{len(mention_counts)} mention counts for {len(mentions)} mentions")
    rng = random.Random(seed)
    label_of: dict[str, int] = {}
    texts: list[str] = []
    labels: list[int] = []
    given = mention_counts if mention_counts is not None else [1] * len(mentions)
    triples = [
        (text, resolved, count)
        for (text, concept_id), count in zip(mentions, given, strict=True)
        if (resolved := terminology.resolve(concept_id)) is not None
    ]
    mentioned = {concept_id for _, concept_id, _ in triples}
    for concept in terminology:
        names = list(dict.fromkeys(name.text for name in concept.names))
        if len(names) < 2 and concept.id not in mentioned:
            continue
        if max_names_per_concept is not None and len(names) > max_names_per_concept:
            names = [names[0], *rng.sample(names[1:], max_names_per_concept - 1)]
        label = label_of.setdefault(concept.id, len(label_of))
        texts.extend(names)
        labels.extend([label] * len(names))
    counts = [0] * len(texts)
    if triples and mention_share > 0:
        wanted = round(len(texts) * mention_share)
        for i in range(max(wanted, len(triples))):
            text, concept_id, count = triples[i % len(triples)]
            texts.append(text)
            labels.append(label_of.setdefault(concept_id, len(label_of)))
            counts.append(count)
    concepts = tuple(sorted(label_of, key=label_of.__getitem__))
    return Examples(
        tuple(texts),
        tuple(labels),
        concepts,
        tuple(terminology.parents(c) for c in concepts),
        relation_triples(terminology, label_of),
        tuple(counts) if mention_counts is not None else (),
    )


def relation_triples(terminology: Terminology, label_of: dict[str, int]) -> tuple[tuple[int, str, int], ...]:
    """CODER's knowledge-graph edges between concepts that have training texts: ``is_a`` and typed relations."""
    edges = [*terminology.is_a_triples(), *terminology.relations()]
    return tuple(
        (label_of[e.head], e.relation, label_of[e.tail]) for e in edges if e.head in label_of and e.tail in label_of
    )


def rows_by_label(labels: Sequence[int]) -> dict[int, list[int]]:
    rows: dict[int, list[int]] = {}
    for row, label in enumerate(labels):
        rows.setdefault(label, []).append(row)
    return rows


def first_texts(examples: Examples) -> list[str]:
    """Each label's first text (its preferred name when it came from a terminology), in label order."""
    first: dict[int, str] = {}
    for text, label in zip(examples.texts, examples.labels, strict=True):
        first.setdefault(label, text)
    return [first[label] for label in range(len(first))]
