"""Candidate mention spans of a text: word n-grams whose normalized form is a name of the terminology (longest
first, never overlapping, never across punctuation), and the short forms the text itself defines ("chronic kidney
disease (CKD)" makes every later "CKD" a span, read as its long form)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from medlink.linking.mentions.abbreviations import find_abbreviations

_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str
    long_form: str | None = None  # for a short form the document defines: what it stands for
    key: str = ""  # the normalized text that was looked up


Test = Callable[[str], bool]


def dictionary_spans(text: str, is_name: Test, normalize: Callable[[str], str], max_words: int = 8,
                     min_chars: int = 3, is_function_word: Test = lambda _: False) -> list[Span]:  # fmt: skip
    """Greedy longest match from left to right over the words of ``text``: spans whose normalized text
    ``is_name``."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    spans, position = [], 0
    while position < len(words):
        width = 0
        for size in range(min(max_words, len(words) - position), 0, -1):
            last = position + size - 1
            if any(text[words[i][1] : words[i + 1][0]].strip() for i in range(position, last)):
                continue  # punctuation between two words: a span never crosses it
            start, end = words[position][0], words[last][1]
            piece = text[start:end]
            if len(piece) < min_chars or all(is_function_word(w.lower()) for w in piece.split()):
                continue
            key = normalize(piece)
            if key and is_name(key):
                width = size
                spans.append(Span(start, end, piece, key=key))
                break
        position += width or 1
    return spans


def abbreviation_spans(text: str, taken: list[Span], is_name: Test, normalize: Callable[[str], str]) -> list[Span]:
    """Every occurrence of a short form the text defines, outside the spans already taken, when its long form is
    itself a name (a short form for a phrase no name matches would be linked by a guess, and read everywhere)."""
    spans = []
    occupied = [(span.start, span.end) for span in taken]
    for short, long in find_abbreviations(text).items():
        key = normalize(long)
        if not key or not is_name(key):
            continue
        for match in re.finditer(rf"(?<![\w-]){re.escape(short)}(?![\w-])", text):
            start, end = match.span()
            if not any(start < o_end and o_start < end for o_start, o_end in occupied):
                spans.append(Span(start, end, short, long, key))
    return spans
