"""Sparse retrieval over character n-grams, and its fusion with dense retrieval.

:class:`SparseRetriever` is the TF-IDF over character 2- and 3-grams of normalized names that BioSyn and
scispaCy use as their second retriever: it catches spelling variants and rare tokens an encoder has never seen.
It is fitted on the index's own entries when a linker asks for it (a few seconds for the MeSH descriptors).

:class:`HybridSieve` fuses dense and sparse candidates per concept, either by a weighted sum of scores
(``hybrid=0.8`` gives the dense score weight 0.8) or by reciprocal rank fusion (``rrf``, k = 60; Cormack et al.
2009), which ignores the scales of the two scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medlink.index import IndexEntry, VectorIndex
from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.linking.sieves.dense import DenseSieve, candidates_from_hits, decide
from medlink.terminology import Terminology

RRF_K = 60


def char_ngram_tfidf(ngrams: tuple[int, int] = (2, 3), analyzer: str = "char_wb"):
    """The unfitted vectorizer: character n-grams within word boundaries (``char_wb``) or across them (``char``,
    for scripts written without spaces), sublinear term frequency, unit rows."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(analyzer=analyzer, ngram_range=ngrams, sublinear_tf=True, dtype=np.float32)


class SparseRetriever:
    """Character n-gram TF-IDF over normalized keys; cosine similarity, sparse matrix products."""

    def __init__(
        self,
        entries: Sequence[IndexEntry],
        terminology: Terminology,
        ngrams: tuple[int, int] = (2, 3),
        analyzer: str = "char_wb",
    ) -> None:
        self.entries = list(entries)
        self.normalizer = terminology.normalizer
        self.vectorizer = char_ngram_tfidf(ngrams, analyzer)
        self.matrix = self.vectorizer.fit_transform([entry.key for entry in self.entries]).T.tocsr()

    def scores(self, keys: Sequence[str]):
        """Cosine of each normalized key with every entry: a sparse (keys × entries) matrix."""
        return (self.vectorizer.transform(list(keys)) @ self.matrix).tocsr()

    @classmethod
    def from_index(cls, index: VectorIndex, terminology: Terminology, sources: str = "OD") -> SparseRetriever:
        return cls([entry for source in sources for entry in index.entries.get(source, [])], terminology)

    def search(self, texts: Sequence[str], k: int) -> list[list[tuple[IndexEntry, float]]]:
        scores = self.scores([self.normalizer(text) for text in texts])
        out = []
        for row in range(scores.shape[0]):
            start, end = scores.indptr[row], scores.indptr[row + 1]
            columns, values = scores.indices[start:end], scores.data[start:end]
            if len(values) > k:
                keep = np.argpartition(-values, k)[:k]
                columns, values = columns[keep], values[keep]
            order = sorted(range(len(values)), key=lambda i: (-values[i], columns[i]))
            out.append([(self.entries[columns[i]], float(values[i])) for i in order])
        return out


class SparseSieve:
    """Links by the nearest name in character n-gram space."""

    stage = Stage.SPARSE

    def __init__(
        self, retriever: SparseRetriever, terminology: Terminology, accept_above: float | None = None, top_k: int = 10
    ) -> None:
        self.retriever, self.terminology, self.accept_above, self.top_k = retriever, terminology, accept_above, top_k
        self.name = "sparse"

    def candidates(self, texts: Sequence[str]) -> list[list[Candidate]]:
        return [candidates_from_hits(hits) for hits in self.retriever.search(texts, self.top_k)]

    def link_batch(self, items: Sequence[tuple[str, str]]) -> list[LinkResult | None]:
        found = self.candidates([text for text, _ in items])
        return [
            decide(text, candidates, self.stage, self.name, self.accept_above, self.terminology)
            for (text, _key), candidates in zip(items, found, strict=True)
        ]


def fuse_candidates(
    dense: Sequence[Candidate], sparse: Sequence[Candidate], dense_weight: float | None
) -> list[Candidate]:
    """One ranked list: weighted sum of scores (a missing score counts 0), or RRF when ``dense_weight`` is None."""
    scores: dict[str, float] = {}
    names: dict[str, str] = {}
    for weight, candidates in ((dense_weight, dense), (None if dense_weight is None else 1 - dense_weight, sparse)):
        for rank, candidate in enumerate(candidates, start=1):
            names.setdefault(candidate.concept_id, candidate.name)
            contribution = 1 / (RRF_K + rank) if dense_weight is None else weight * candidate.score  # type: ignore[operator]
            scores[candidate.concept_id] = scores.get(candidate.concept_id, 0.0) + contribution
    ranked = sorted(scores, key=lambda concept: (-scores[concept], concept))
    return [Candidate(concept, names[concept], scores[concept]) for concept in ranked]


class HybridSieve:
    """Dense and sparse candidates fused per concept; decides with the best fused candidate."""

    stage = Stage.HYBRID

    def __init__(
        self,
        dense: DenseSieve,
        sparse: SparseSieve,
        dense_weight: float | None = 0.8,
        accept_above: float | None = None,
    ) -> None:
        self.dense, self.sparse, self.dense_weight, self.accept_above = dense, sparse, dense_weight, accept_above
        self.name = f"hybrid-{dense.name}" + ("-rrf" if dense_weight is None else f"={dense_weight:g}")

    def link_batch(self, items: Sequence[tuple[str, str]]) -> list[LinkResult | None]:
        texts = [text for text, _ in items]
        fused = [
            fuse_candidates(d, s, self.dense_weight)
            for d, s in zip(self.dense.candidates(texts), self.sparse.candidates(texts), strict=True)
        ]
        return [
            decide(text, candidates, self.stage, self.name, self.accept_above, self.dense.terminology)
            for text, candidates in zip(texts, fused, strict=True)
        ]
