"""What annotated mentions teach a ranker: their nearest neighbours and which n-grams come with which concepts.

Short clinical strings often name several concepts at once ("子宫颈鳞癌IIB期放化疗后" is a cervical cancer, a
squamous cell carcinoma, radiotherapy and chemotherapy; Liang et al. 2021), and in words no terminology name
contains. Two kinds of evidence from the training mentions reach them:

- **Neighbours**: the training mentions nearest in character n-gram TF-IDF space, and the concepts they carry.
- **Associations**: for every character n-gram of a training mention, how often it comes with each concept
  ("放化疗" with radiotherapy and with chemotherapy). A mention's association with a concept is the highest
  ``count(gram, concept) / (count(gram) + 1)`` over its n-grams seen at least twice — a lexical translation table.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from medlink.linking.sieves.sparse import char_ngram_tfidf

MIN_SHARE = 0.02


@dataclass(frozen=True)
class Remembered:
    """One annotated mention: its text and its concepts, one tuple of acceptable ids per concept it names."""

    text: str
    parts: tuple[tuple[str, ...], ...]

    def concepts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(concept for part in self.parts for concept in part))


@dataclass(frozen=True)
class Association:
    """A mention's strongest tie to one concept through a shared n-gram."""

    strength: float  # the best count(gram, concept) / (count(gram) + 1)
    gram_length: int  # length of the n-gram giving it
    mass: float  # sum over the mention's n-grams of strength × length, per character of the mention


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Positions of the ``k`` highest scores, best first (ties by position, so results never vary)."""
    if len(scores) > k:
        kept = np.argpartition(-scores, k)[:k]
        return sorted(kept.tolist(), key=lambda i: (-scores[i], i))
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def grams(key: str, longest: int) -> list[str]:
    """Every distinct character n-gram of ``key`` up to ``longest`` characters (spaces excluded from unigrams), in
    sorted order: a set's order changes between processes, and with it float sums and ties."""
    found = {key[i : i + n] for n in range(2, longest + 1) for i in range(len(key) - n + 1)}
    return sorted(found | {character for character in key if not character.isspace()})


class MentionMemory:
    """Training mentions, searchable by character n-grams; built in a second for a few thousand mentions."""

    def __init__(
        self,
        mentions: Sequence[Remembered],
        normalizer: Callable[[str], str],
        ngrams: tuple[int, int] = (1, 3),
        longest_gram: int = 4,
        min_gram_count: int = 2,
        vectors: np.ndarray | None = None,
    ) -> None:
        self.mentions = tuple(mentions)
        if vectors is not None and vectors.shape[0] != len(self.mentions):
            raise ValueError(f"{vectors.shape[0]} mention vectors for {len(self.mentions)} mentions")
        self.vectors = vectors  # the mentions' unit vectors from a ranker's encoder, when it has one
        self.normalizer = normalizer
        self.ngrams, self.longest_gram, self.min_gram_count = ngrams, longest_gram, min_gram_count
        keys = [normalizer(m.text) for m in self.mentions]
        self.vectorizer = char_ngram_tfidf(ngrams, analyzer="char")
        self.matrix = self.vectorizer.fit_transform(keys).T.tocsr() if any(keys) else None
        self.frequency: Counter[str] = Counter(c for m in self.mentions for c in m.concepts())
        gram_count: Counter[str] = Counter()
        gram_concepts: dict[str, Counter[str]] = defaultdict(Counter)
        for key, mention in zip(keys, self.mentions, strict=True):
            concepts = mention.concepts()
            for gram in grams(key, longest_gram):
                gram_count[gram] += 1
                gram_concepts[gram].update(concepts)
        # Per n-gram seen often enough, its concepts' shares; shares under MIN_SHARE (a common character's
        # hundreds of passing concepts) are dropped: they cost most of the time and carry no signal.
        self._shares: dict[str, tuple[tuple[str, float], ...]] = {}
        for gram, seen in gram_count.items():
            if seen >= min_gram_count:
                shares = ((c, together / (seen + 1)) for c, together in gram_concepts[gram].items())
                self._shares[gram] = tuple((c, share) for c, share in shares if share >= MIN_SHARE)

    def __len__(self) -> int:
        return len(self.mentions)

    def nearest(self, keys: Sequence[str], k: int) -> list[list[tuple[Remembered, float]]]:
        """The ``k`` nearest training mentions of each normalized key, with their cosine, best first."""
        if self.matrix is None:
            return [[] for _ in keys]
        scores = (self.vectorizer.transform(list(keys)) @ self.matrix).toarray()
        out = []
        for row in scores:
            out.append([(self.mentions[i], float(row[i])) for i in top_k(row, k) if row[i] > 0])
        return out

    def nearest_by_vector(self, queries: np.ndarray, k: int) -> list[list[tuple[Remembered, float]]]:
        """The ``k`` training mentions with the highest cosine to each query vector (needs ``vectors``)."""
        if self.vectors is None or not len(self.mentions):
            return [[] for _ in range(len(queries))]
        scores = queries @ self.vectors.T
        return [[(self.mentions[i], float(row[i])) for i in top_k(row, k)] for row in scores]

    def associations(self, key: str) -> dict[str, Association]:
        """The concepts the n-grams of ``key`` come with in the training mentions."""
        strength: dict[str, float] = {}
        length: dict[str, int] = {}
        mass: dict[str, float] = defaultdict(float)
        for gram in grams(key, self.longest_gram):
            for concept, share in self._shares.get(gram, ()):
                mass[concept] += share * len(gram)
                if share > strength.get(concept, 0.0):
                    strength[concept], length[concept] = share, len(gram)
        width = max(1, len(key))
        return {c: Association(strength[c], length[c], mass[c] / width) for c in strength}
