"""Candidates for a mention and what a ranker knows about each (mention, candidate name) pair.

Candidates come from three places: the names nearest in character n-gram space, the concepts of the nearest
training mentions, and the concepts the mention's n-grams are associated with (``mention_memory.py``). Each pair
gets the numbers in :data:`FEATURES`: lexical similarity to the name, the training mentions' votes, association
strength, character overlap and how often the concept was annotated. No encoder is needed.

With :class:`DenseNames` (an encoder and the vectors of every name) the nearest names by cosine join the
candidates, and each pair also gets :data:`DENSE_FEATURES`: its cosine, its distance from the best cosine and its
rank, and the vote of the training mentions nearest by cosine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rapidfuzz.distance import LCSseq

from medlink.encoders.base import Encoder
from medlink.index import IndexEntry, ontology_entries
from medlink.linking.sets.mention_memory import MentionMemory, Remembered, top_k
from medlink.linking.sieves.sparse import SparseRetriever
from medlink.terminology import Terminology

FEATURES = (
    "name_score",
    "below_best_name",
    "name_rank",
    "relative_name_score",
    "neighbour_vote",
    "best_neighbour",
    "neighbour_rank",
    "nearest_neighbour",
    "neighbour_concepts",
    "nearest_concepts",
    "association",
    "association_gram",
    "association_mass",
    "name_chars_in_mention",
    "mention_chars_in_name",
    "longest_common_run",
    "common_characters",
    "name_inside_mention",
    "log_frequency",
    "name_length",
    "mention_length",
)
DENSE_FEATURES = ("dense_score", "below_best_dense", "dense_rank", "dense_neighbour_vote")


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
    dense_candidates: int = 10


@dataclass(frozen=True)
class DenseNames:
    """An encoder (``name`` is what ``load_encoder`` takes) and the unit vectors of the featurizer's name entries
    (one row per entry, same order)."""

    name: str
    encoder: Encoder
    vectors: np.ndarray


@dataclass(frozen=True)
class CandidatePairs:
    """For a batch of mentions: per mention, its candidate names (index entries) and one feature row each."""

    entries: tuple[tuple[IndexEntry, ...], ...]
    features: tuple[np.ndarray, ...]  # per mention: (candidates, len(FEATURES))


class PairFeaturizer:
    """Makes the candidates and features of mentions against one terminology and one memory of mentions."""

    def __init__(
        self,
        terminology: Terminology,
        memory: MentionMemory,
        settings: PairSettings | None = None,
        names: SparseRetriever | None = None,
        dense: DenseNames | None = None,
    ) -> None:
        self.terminology, self.memory = terminology, memory
        self.settings = settings or PairSettings()
        self.names = names or names_retriever(terminology)
        if dense is not None and dense.vectors.shape[0] != len(self.names.entries):
            raise ValueError(f"{dense.vectors.shape[0]} name vectors for {len(self.names.entries)} names")
        if dense is not None and memory.mentions and memory.vectors is None:
            raise ValueError("a dense featurizer needs the training mentions' vectors too")
        self.dense = dense
        self._entry_of_concept: dict[str, int] = {}
        for position, entry in enumerate(self.names.entries):
            for concept in entry.concepts:
                self._entry_of_concept.setdefault(concept, position)

    def with_memory(self, memory: MentionMemory) -> PairFeaturizer:
        """The same names (fitted once) with other training mentions: cross-fitting uses one per fold."""
        return PairFeaturizer(self.terminology, memory, self.settings, self.names, self.dense)

    @property
    def features(self) -> tuple[str, ...]:
        return FEATURES + DENSE_FEATURES if self.dense is not None else FEATURES

    def pairs(self, texts: Sequence[str]) -> CandidatePairs:
        keys = [self.terminology.normalizer(text) for text in texts]
        name_scores = self.names.scores(keys)
        neighbours = self.memory.nearest(keys, self.settings.neighbours)
        cosines, dense_neighbours = self._dense(texts)
        entries, features = [], []
        for row, key in enumerate(keys):
            scores = name_scores.getrow(row).toarray().ravel()
            cosine = None if cosines is None else cosines[row]
            found, rows = self._mention_pairs(key, scores, neighbours[row], cosine, dense_neighbours[row])
            entries.append(tuple(self.names.entries[i] for i in found))
            features.append(np.asarray(rows, dtype=np.float32).reshape(len(found), len(self.features)))
        return CandidatePairs(tuple(entries), tuple(features))

    def _dense(self, texts: Sequence[str]) -> tuple[np.ndarray | None, list[list]]:
        """Per mention: its cosine with every name, and its nearest training mentions by cosine."""
        if self.dense is None:
            return None, [[] for _ in texts]
        queries = self.dense.encoder.encode(list(texts))
        return queries @ self.dense.vectors.T, self.memory.nearest_by_vector(queries, self.settings.neighbours)

    def _mention_pairs(
        self, key: str, scores: np.ndarray, neighbours: list, cosine: np.ndarray | None, dense_neighbours: list
    ) -> tuple[list[int], list[list[float]]]:
        settings = self.settings
        top_names = [i for i in top_k(scores, settings.name_candidates) if scores[i] > 0]
        top_dense = top_k(cosine, settings.dense_candidates) if cosine is not None else []
        dense_rank = (
            {entry: rank for rank, entry in enumerate(top_k(cosine, 3 * settings.dense_candidates))}
            if cosine is not None
            else {}
        )
        dense_vote = _votes(dense_neighbours)
        name_rank = {entry: rank for rank, entry in enumerate(top_names)}
        best_name = float(scores[top_names[0]]) if top_names else 0.0
        vote = _votes(neighbours)
        best_neighbour, neighbour_rank = _closest_neighbours(neighbours)
        associations = self.memory.associations(key)
        associated = sorted(associations, key=lambda c: (-associations[c].strength, c))[: settings.associated]
        found = list(
            dict.fromkeys(
                [
                    *top_names,
                    *self._entries_of(vote),
                    *self._entries_of(associated),
                    *top_dense,
                    *self._entries_of(dense_vote),
                ]
            )
        )
        best_cosine = float(cosine[top_dense[0]]) if top_dense and cosine is not None else 0.0
        nearest = neighbours[0][1] if neighbours else 0.0
        counts = [len(mention.parts) for mention, _ in neighbours[:3]] or [0]
        key_characters = characters(key)
        rows = []
        for position in found:
            entry = self.names.entries[position]
            concepts = entry.concepts
            name = entry.key
            name_characters = characters(name)
            shared = len(name_characters & key_characters)
            blocks = LCSseq.editops(key, name).as_matching_blocks()
            association = max(
                (associations[c] for c in concepts if c in associations), key=lambda a: a.strength, default=None
            )
            score = float(scores[position])
            rows.append(
                [
                    score,
                    best_name - score,
                    name_rank.get(position, settings.name_candidates),
                    score / best_name if best_name > 0 else 0.0,
                    _best(vote, concepts, 0.0),
                    _best(best_neighbour, concepts, 0.0),
                    _best(neighbour_rank, concepts, 2 * settings.neighbours, pick=min),
                    nearest,
                    sum(counts) / len(counts),
                    counts[0],
                    association.strength if association else 0.0,
                    association.gram_length if association else 0,
                    association.mass if association else 0.0,
                    shared / max(1, len(name_characters)),
                    shared / max(1, len(key_characters)),
                    max((b.size for b in blocks), default=0) / max(1, len(name)),
                    sum(b.size for b in blocks) / max(1, len(name)),
                    float(name in key),
                    math.log1p(_best(self.memory.frequency, concepts, 0)),
                    len(name),
                    len(key),
                ]
            )
            if cosine is not None:
                similarity = float(cosine[position])
                rows[-1] += [
                    similarity,
                    best_cosine - similarity,
                    dense_rank.get(position, 3 * settings.dense_candidates),
                    _best(dense_vote, concepts, 0.0),
                ]
        return found, rows

    def _entries_of(self, concepts) -> list[int]:
        return [self._entry_of_concept[c] for c in concepts if c in self._entry_of_concept]


def _closest_neighbours(neighbours: list) -> tuple[dict[str, float], dict[str, int]]:
    """Per concept, the best similarity of a remembered mention claiming it and the rank of the first such one."""
    best: dict[str, float] = {}
    rank_of: dict[str, int] = {}
    for rank, (mention, similarity) in enumerate(neighbours):
        for concept in mention.concepts():
            best[concept] = max(best.get(concept, 0.0), similarity)
            rank_of.setdefault(concept, rank)
    return best, rank_of


@lru_cache(maxsize=1 << 17)
def characters(key: str) -> frozenset[str]:
    """The characters of a normalized key, spaces left out (cached: the same names come up for many mentions)."""
    return frozenset(key.replace(" ", ""))


def _best(table: Mapping[str, float], concepts: Sequence[str], default: float, pick=max) -> float:
    """The highest (``pick=min``: lowest) value ``table`` holds for any of ``concepts`` (nearly always one),
    ``default`` for those it lacks."""
    if len(concepts) == 1:
        return table.get(concepts[0], default)
    return pick(table.get(c, default) for c in concepts)


def _votes(neighbours: Sequence[tuple[Remembered, float]]) -> dict[str, float]:
    """Each concept's share of the neighbours' (positive) similarity."""
    total = sum(max(similarity, 0.0) for _, similarity in neighbours) or 1.0
    vote: dict[str, float] = {}
    for mention, similarity in neighbours:
        for concept in mention.concepts():
            vote[concept] = vote.get(concept, 0.0) + max(similarity, 0.0) / total
    return vote


def names_retriever(terminology: Terminology) -> SparseRetriever:
    """Character 1- to 3-grams across word boundaries: Chinese names have no spaces, and single characters carry
    meaning (癌 cancer, 炎 inflammation)."""
    return SparseRetriever(ontology_entries(terminology), terminology, ngrams=(1, 3), analyzer="char")
