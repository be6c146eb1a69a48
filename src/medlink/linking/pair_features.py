"""Candidates for a mention and what a ranker knows about each (mention, candidate name) pair.

Candidates come from three places: the names nearest in character n-gram space, the concepts of the nearest
training mentions, and the concepts the mention's n-grams are associated with (``mention_memory.py``). Each pair
gets the numbers in :data:`FEATURES`: lexical similarity to the name, the training mentions' votes, association
strength, character overlap and how often the concept was annotated. No encoder is needed, so the ranker links
Chinese as fast as English.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from medlink.index import IndexEntry, ontology_entries
from medlink.linking.mention_memory import MentionMemory, top_k
from medlink.linking.sparse import SparseRetriever
from medlink.terminology import Terminology

FEATURES = (
    "name_score", "below_best_name", "name_rank", "relative_name_score",
    "neighbour_vote", "best_neighbour", "neighbour_rank", "nearest_neighbour", "neighbour_concepts",
    "nearest_concepts", "association", "association_gram", "association_mass",
    "name_chars_in_mention", "mention_chars_in_name", "longest_common_run", "common_characters", "name_inside_mention",
    "log_frequency", "name_length", "mention_length",
)  # fmt: skip


@dataclass(frozen=True)
class PairSettings:
    """How many candidates each source gives; the defaults were chosen on CHIP-CDN train (cross-fitted).

    name_candidates: nearest names by character n-grams.
    neighbours: nearest training mentions whose concepts become candidates and vote.
    associated: concepts most associated with the mention's n-grams.
    """

    name_candidates: int = 30
    neighbours: int = 10
    associated: int = 10


@dataclass(frozen=True)
class CandidatePairs:
    """For a batch of mentions: per mention, its candidate names (index entries) and one feature row each."""

    entries: tuple[tuple[IndexEntry, ...], ...]
    features: tuple[np.ndarray, ...]  # per mention: (candidates, len(FEATURES))


class PairFeaturizer:
    """Makes the candidates and features of mentions against one terminology and one memory of mentions."""

    def __init__(self, terminology: Terminology, memory: MentionMemory, settings: PairSettings | None = None,
                 names: SparseRetriever | None = None) -> None:  # fmt: skip
        self.terminology, self.memory = terminology, memory
        self.settings = settings or PairSettings()
        self.names = names or names_retriever(terminology)
        self._entry_of_concept: dict[str, int] = {}
        for position, entry in enumerate(self.names.entries):
            for concept in entry.concepts:
                self._entry_of_concept.setdefault(concept, position)

    def with_memory(self, memory: MentionMemory) -> PairFeaturizer:
        """The same names (fitted once) with other training mentions: cross-fitting uses one per fold."""
        return PairFeaturizer(self.terminology, memory, self.settings, self.names)

    def pairs(self, texts: Sequence[str]) -> CandidatePairs:
        keys = [self.terminology.normalizer(text) for text in texts]
        name_scores = self.names.scores(keys)
        neighbours = self.memory.nearest(keys, self.settings.neighbours)
        entries, features = [], []
        for row, key in enumerate(keys):
            scores = name_scores.getrow(row).toarray().ravel()
            found, rows = self._mention_pairs(key, scores, neighbours[row])
            entries.append(tuple(self.names.entries[i] for i in found))
            features.append(np.asarray(rows, dtype=np.float32).reshape(len(found), len(FEATURES)))
        return CandidatePairs(tuple(entries), tuple(features))

    def _mention_pairs(self, key: str, scores: np.ndarray, neighbours: list) -> tuple[list[int], list[list[float]]]:
        settings = self.settings
        top_names = [i for i in top_k(scores, settings.name_candidates) if scores[i] > 0]
        name_rank = {entry: rank for rank, entry in enumerate(top_names)}
        best_name = float(scores[top_names[0]]) if top_names else 0.0
        total = sum(max(similarity, 0.0) for _, similarity in neighbours) or 1.0
        vote: dict[str, float] = {}
        best_neighbour: dict[str, float] = {}
        neighbour_rank: dict[str, int] = {}
        for rank, (mention, similarity) in enumerate(neighbours):
            for concept in mention.concepts():
                vote[concept] = vote.get(concept, 0.0) + max(similarity, 0.0) / total
                best_neighbour[concept] = max(best_neighbour.get(concept, 0.0), similarity)
                neighbour_rank.setdefault(concept, rank)
        associations = self.memory.associations(key)
        associated = sorted(associations, key=lambda c: (-associations[c].strength, c))[: settings.associated]
        found = list(dict.fromkeys([*top_names, *self._entries_of(vote), *self._entries_of(associated)]))
        nearest = neighbours[0][1] if neighbours else 0.0
        counts = [len(mention.parts) for mention, _ in neighbours[:3]] or [0]
        key_characters = set(key.replace(" ", ""))
        rows = []
        for position in found:
            entry = self.names.entries[position]
            concepts = entry.concepts
            name = entry.key
            name_characters = set(name.replace(" ", ""))
            shared = len(name_characters & key_characters)
            blocks = SequenceMatcher(None, key, name, autojunk=False).get_matching_blocks()
            association = max((associations[c] for c in concepts if c in associations),
                              key=lambda a: a.strength, default=None)  # fmt: skip
            score = float(scores[position])
            rows.append([
                score, best_name - score, name_rank.get(position, settings.name_candidates),
                score / best_name if best_name > 0 else 0.0,
                max((vote.get(c, 0.0) for c in concepts), default=0.0),
                max((best_neighbour.get(c, 0.0) for c in concepts), default=0.0),
                min((neighbour_rank.get(c, 2 * settings.neighbours) for c in concepts), default=0),
                nearest, sum(counts) / len(counts), counts[0],
                association.strength if association else 0.0, association.gram_length if association else 0,
                association.mass if association else 0.0,
                shared / max(1, len(name_characters)), shared / max(1, len(key_characters)),
                max((b.size for b in blocks), default=0) / max(1, len(name)),
                sum(b.size for b in blocks) / max(1, len(name)), float(name in key),
                math.log1p(max((self.memory.frequency.get(c, 0) for c in concepts), default=0)),
                len(name), len(key),
            ])  # fmt: skip
        return found, rows

    def _entries_of(self, concepts) -> list[int]:
        return [self._entry_of_concept[c] for c in concepts if c in self._entry_of_concept]


def names_retriever(terminology: Terminology) -> SparseRetriever:
    """Character 1- to 3-grams across word boundaries: Chinese names have no spaces, and single characters carry
    meaning (癌 cancer, 炎 inflammation)."""
    return SparseRetriever(ontology_entries(terminology), terminology, ngrams=(1, 3), analyzer="char")
