"""BM25 over trial texts, by ``bm25s`` (Lucene's BM25 variant, k1 = 1.5, b = 0.75; English stop words removed).

The same tokenizer reads trials and notes. Scores come for every trial at once (a sparse matrix product), so a
note is scored against the whole corpus or against a judged pool at the same cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

STOPWORDS = "en"


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(list(texts), stopwords=STOPWORDS, return_ids=False, show_progress=False)


class Bm25:
    """A BM25 index of ``len(self)`` trial texts, in the order they were given."""

    def __init__(self, retriever, size: int) -> None:
        self._retriever = retriever
        self._size = size

    @classmethod
    def build(cls, texts: Sequence[str]) -> Bm25:
        import bm25s

        retriever = bm25s.BM25()
        # bm25s refuses an empty vocabulary; a corpus of empty texts still gets an index that scores 0 everywhere
        tokens = [words or ["_"] for words in _tokenize(texts)]
        retriever.index(tokens, show_progress=False)
        return cls(retriever, len(texts))

    @classmethod
    def load(cls, folder: Path, size: int) -> Bm25:
        import bm25s

        return cls(bm25s.BM25.load(str(folder), show_progress=False, verbosity=0), size)

    def save(self, folder: Path) -> None:
        self._retriever.save(str(folder), show_progress=False)

    def __len__(self) -> int:
        return self._size

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every indexed text for ``query`` (0 where no query word occurs)."""
        words = _tokenize([query])[0]
        if not words:
            return np.zeros(self._size, dtype=np.float32)
        return np.asarray(self._retriever.get_scores(words), dtype=np.float32)
