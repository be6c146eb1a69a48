"""Cross-fitting folds by a hash of the mention text: the same on every run, blind to case and width, and a
corpus without a fold holds exactly the other folds' mentions."""

from __future__ import annotations

import pytest

from medlink.evaluation.corpus import Corpus, Gold, GoldMention
from medlink.evaluation.folds import fold_of

TEXTS = [f"肺癌{i}期" for i in range(40)] + [f"type {i} diabetes" for i in range(40)]


def test_a_text_has_one_fold_whatever_its_case_or_width() -> None:
    assert fold_of("Type 2 Diabetes", 5) == fold_of("type  2 diabetes", 5) == fold_of("ＴＹＰＥ 2 diabetes", 5)
    assert {fold_of(text, 5) for text in TEXTS} == set(range(5))  # 80 texts reach every fold
    with pytest.raises(ValueError, match="at least 2 folds"):
        fold_of("asthma", 1)


def test_a_corpus_without_a_fold_keeps_the_others() -> None:
    corpus = Corpus("c", tuple(GoldMention(text, Gold.of(((f"C{i}",),))) for i, text in enumerate(TEXTS)))
    parts = [corpus.without_fold(k, 4) for k in range(4)]
    for k, part in enumerate(parts):
        assert all(fold_of(m.text, 4) != k for m in part)
    # each mention is left out by exactly one fold
    assert sum(len(corpus) - len(part) for part in parts) == len(corpus)
