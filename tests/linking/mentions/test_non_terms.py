"""The function-word list ships as data (no scikit-learn import on the way to an answer) and stays in step with
the list it was made from (tests/linking/test_nil.py checks what the linker does with it)."""

from __future__ import annotations

from medlink.linking.mentions.non_terms import function_words

# The content words among scikit-learn's English stop words: a terminology may hold them, so they stay terms.
CONTENT_WORDS = {
    "back",
    "bill",
    "bottom",
    "call",
    "cry",
    "describe",
    "detail",
    "empty",
    "fill",
    "find",
    "fire",
    "found",
    "front",
    "full",
    "interest",
    "mill",
    "move",
    "name",
    "part",
    "serious",
    "show",
    "side",
    "sincere",
    "system",
    "thick",
    "thin",
    "top",
}


def test_the_shipped_function_words_are_sklearns_stop_words_without_content_words() -> None:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    assert function_words() == frozenset(ENGLISH_STOP_WORDS) - CONTENT_WORDS
    assert {"the", "of", "and", "whereas"} <= function_words() and not CONTENT_WORDS & function_words()
