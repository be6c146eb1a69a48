"""Tf-idf negatives (Liang et al. 2021, §3.1.2): each concept batched with the concepts whose names look most
like its own in character n-gram TF-IDF space, the same space as medlink's sparse retriever.

Unlike model-mined negatives they are computed once, before training (the paper's point: cheaper, but they do not
follow the model's own confusions). The neighbours feed :class:`MinedBatchSampler`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def tfidf_neighbours(texts: Sequence[str], k: int, block: int = 2048) -> list[list[int]]:
    """For every position ``i`` of ``texts`` (one text per concept label), the ``k`` other positions with the most
    similar character n-grams, most similar first (ties by position, so the result is deterministic)."""
    from medlink.linking.sieves.sparse import char_ngram_tfidf

    matrix = char_ngram_tfidf().fit_transform(texts).tocsr()
    transposed = matrix.T.tocsr()
    nearest: list[list[int]] = []
    for start in range(0, len(texts), block):
        scores = (matrix[start : start + block] @ transposed).tocsr()
        for offset in range(scores.shape[0]):
            row = start + offset
            begin, end = scores.indptr[offset], scores.indptr[offset + 1]
            columns, values = scores.indices[begin:end], scores.data[begin:end]
            keep = columns != row
            columns, values = columns[keep], values[keep]
            if len(values) > k:
                top = np.argpartition(-values, k)[:k]
                columns, values = columns[top], values[top]
            order = sorted(range(len(values)), key=lambda i: (-values[i], columns[i]))
            nearest.append([int(columns[i]) for i in order])
    return nearest
