"""Approximate name lookup, as QuickUMLS does it (Soldaini & Goharian 2016, after SimString): the names whose
character-trigram sets have a Jaccard similarity of at least a threshold with the text's, so "hypertensive
disorder" or a misspelt "myocardial infraction" still become spans.

Any name within the threshold shares at least ⌈t·n⌉ of the query's n trigrams, so it shares one of the query's
n − ⌈t·n⌉ + 1 rarest trigrams (prefix filtering): only the names listed under those few trigrams are scored."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def trigrams(key: str) -> set[str]:
    padded = f" {key} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


@dataclass(frozen=True)
class NearName:
    name: str
    similarity: float


class ApproximateNames:
    """The normalized names of a terminology, indexed by character trigrams."""

    def __init__(self, names: Sequence[str], threshold: float) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"the similarity threshold must be in (0, 1], not {threshold}")
        self.threshold = threshold
        self.names = list(names)
        vocabulary: dict[str, int] = {}
        name_of, trigram_of = [], []
        sizes = np.zeros(len(self.names), dtype=np.int32)
        for number, name in enumerate(self.names):
            grams = trigrams(name)
            sizes[number] = len(grams)
            for gram in grams:
                name_of.append(number)
                trigram_of.append(vocabulary.setdefault(gram, len(vocabulary)))
        self.vocabulary = vocabulary
        self.sizes = sizes
        order = np.argsort(np.asarray(trigram_of, dtype=np.int64), kind="stable")
        self.postings = np.asarray(name_of, dtype=np.int32)[order]  # name ids, grouped by trigram, ascending
        counts = np.bincount(np.asarray(trigram_of, dtype=np.int64), minlength=len(vocabulary))
        self.starts = np.concatenate([[0], np.cumsum(counts)])

    def _posting(self, gram: int) -> np.ndarray:
        return self.postings[self.starts[gram] : self.starts[gram + 1]]

    def nearest(self, key: str) -> NearName | None:
        """The most similar name at or above the threshold (ties: the shorter name), or ``None``."""
        grams = trigrams(key)
        n = len(grams)
        needed = math.ceil(self.threshold * n - 1e-9)
        known = sorted(
            (self.vocabulary[g] for g in grams if g in self.vocabulary),
            key=lambda g: self.starts[g + 1] - self.starts[g],
        )
        if len(known) < needed or needed == 0:
            return None
        candidates = np.unique(np.concatenate([self._posting(g) for g in known[: len(known) - needed + 1]]))
        sizes = self.sizes[candidates]
        candidates = candidates[(sizes >= self.threshold * n) & (sizes <= n / self.threshold)]
        if not len(candidates):
            return None
        overlap = np.zeros(len(candidates), dtype=np.int32)
        for gram in known:
            posting = self._posting(gram)
            at = np.searchsorted(posting, candidates)
            overlap += (at < len(posting)) & (posting[np.minimum(at, len(posting) - 1)] == candidates)
        similarity = overlap / (n + self.sizes[candidates] - overlap)
        best = int(np.lexsort((self.sizes[candidates], -similarity))[0])
        if similarity[best] < self.threshold:
            return None
        return NearName(self.names[int(candidates[best])], float(similarity[best]))
