"""Candidate mention spans of a text: word n-grams whose normalized form is a name of the terminology (longest
first, never overlapping, never across punctuation), and the short forms the text itself defines ("chronic kidney
disease (CKD)" makes every later "CKD" a span, read as its long form)."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise

from medlink.linking.annotation.approximate import NearName
from medlink.linking.annotation.tagger import TaggedSpan
from medlink.text.normalize import WordRuns

_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str
    long_form: str | None = None  # for a short form the document defines: what it stands for
    key: str = ""  # the normalized text that was looked up
    tagged: str | None = None  # for a span the tagger found: its kind and confidence, e.g. "Disease, 0.97"
    near: NearName | None = None  # for an approximate span: the name it resembles, linked in its place
    taught: bool = False  # its text is taught by a lexicon: it is linked as the lexicon says, not searched
    parts: tuple[Span, ...] = ()  # for a coordination ("breast and ovarian cancer"): its conjuncts, each linked


Test = Callable[[str], bool]
NameTest = Callable[[str, str], bool]  # whether a normalized key, written so in the text, is a name there


def dictionary_spans(
    text: str,
    is_name: NameTest,
    normalize: Callable[[str], str],
    max_words: int = 8,
    min_chars: int = 3,
    is_function_word: Test = lambda _: False,
    in_names: Test = lambda _: True,
    word_runs: Callable[[Sequence[str]], WordRuns] | None = None,
) -> list[Span]:
    """Greedy longest match from left to right over the words of ``text``: spans whose normalized text
    ``is_name``. ``in_names(word)`` False says no name holds that word, so no span is tried across it;
    ``word_runs``, where given, reads the text's words once for the keys of all their runs
    (:class:`~medlink.text.normalize.WordRuns`)."""
    return _longest_first(
        text,
        lambda key, written: Span(0, 0, "", key=key) if is_name(key, written) else None,
        normalize,
        max_words,
        min_chars,
        is_function_word,
        in_names,
        word_runs,
    )


def approximate_spans(
    text: str,
    taken: list[Span],
    nearest: Callable[[str], NearName | None],
    normalize: Callable[[str], str],
    max_words: int,
    min_chars: int,
    is_function_word: Test,
) -> list[Span]:
    """Greedy longest match, as :func:`dictionary_spans`, of the words outside the spans already ``taken``, with a
    name that ``nearest`` finds similar enough."""

    def near(key: str, written: str) -> Span | None:
        words = key.split()
        if is_function_word(words[0]) or is_function_word(words[-1]):
            return None  # "a myocardal infarction": the name resembles the words without "a"
        found = nearest(key)
        return Span(0, 0, "", key=key, near=found) if found is not None else None

    edges = [0, *(edge for span in sorted(taken, key=lambda s: s.start) for edge in (span.start, span.end)), len(text)]
    spans = []
    for gap_start, gap_end in zip(edges[::2], edges[1::2], strict=True):
        for span in _longest_first(text[gap_start:gap_end], near, normalize, max_words, min_chars, is_function_word):
            spans.append(Span(span.start + gap_start, span.end + gap_start, span.text, key=span.key, near=span.near))
    return spans


def _longest_first(
    text: str,
    accept: Callable[[str, str], Span | None],  # the key and the text it was read from
    normalize: Callable[[str], str],
    max_words: int,
    min_chars: int,
    is_function_word: Test,
    in_names: Test = lambda _: True,
    word_runs: Callable[[Sequence[str]], WordRuns] | None = None,
) -> list[Span]:
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    written = [text[start:end] for start, end in words]
    runs = word_runs(written) if word_runs else None
    reach = [0] * (len(words) + 1)  # reach[i]: how many words from i on could all be in a name
    for i in range(len(words) - 1, -1, -1):
        reach[i] = reach[i + 1] + 1 if in_names(written[i]) else 0
    # running counts over the words, so that what a run holds is one subtraction: punctuation after a word (a span
    # never crosses it) and words of content. Two words are never adjacent (_WORD takes every word character it
    # can), so the words a run holds are those its text splits into at whitespace.
    gaps = [text[end:start] for (_, end), (start, _) in pairwise(words)]
    broken = list(accumulate((bool(gap.strip()) for gap in gaps), initial=0))
    content = list(accumulate((not is_function_word(word.lower()) for word in written), initial=0))
    spans, position = [], 0
    while position < len(words):
        width = 0
        for size in range(min(max_words, reach[position]), 0, -1):
            last = position + size - 1
            if broken[last] > broken[position]:
                continue
            start, end = words[position][0], words[last][1]
            piece = text[start:end]
            if content[last + 1] == content[position]:  # function words only
                continue
            if len(piece) < min_chars:
                continue
            key = runs.key(position, last + 1) if runs else normalize(piece)
            found = accept(key, piece) if key else None
            if found is not None:
                width = size
                spans.append(Span(start, end, piece, key=key, near=found.near))
                break
        position += width or 1
    return spans


def abbreviation_spans(
    text: str, short_forms: Mapping[str, str], taken: list[Span], is_name: Test, normalize: Callable[[str], str]
) -> list[Span]:
    """Every occurrence of a short form the text defines (``short_forms``, short → long, as
    :func:`~medlink.linking.mentions.abbreviations.find_abbreviations` finds them), outside the spans already
    taken, when its long form is itself a name (a short form for a phrase no name matches would be linked by a
    guess, and read everywhere)."""
    spans = []
    in_taken = Overlaps(taken)
    for short, long in short_forms.items():
        key = normalize(long)
        if not key or not is_name(key):
            continue
        for match in re.finditer(rf"(?<![\w-]){re.escape(short)}(?![\w-])", text):
            span = Span(*match.span(), short, long, key)
            if not in_taken(span):
                spans.append(span)
    return spans


def tagged_spans(tagged: Sequence[TaggedSpan], text: str, normalize: Callable[[str], str]) -> list[Span]:
    return [
        Span(
            t.start,
            t.end,
            text[t.start : t.end],
            key=normalize(text[t.start : t.end]),
            tagged=f"{t.entity_type}, {t.score:.2f}",
        )
        for t in tagged
    ]


class Overlaps:
    """Whether a span overlaps any of ``spans`` (fixed), in logarithmic time: a scan over all of them for every
    span of a long document was quadratic."""

    def __init__(self, spans: Iterable[Span | TaggedSpan]) -> None:
        ordered = sorted(spans, key=lambda span: span.start)
        self._starts = [span.start for span in ordered]
        self._reach = list(accumulate((span.end for span in ordered), max))  # the furthest end so far

    def __call__(self, span: Span | TaggedSpan) -> bool:
        before = bisect_left(self._starts, span.end)  # the spans that start before this one ends
        return before > 0 and self._reach[before - 1] > span.start

    def around(self, position: int) -> bool:
        """Whether one of the spans starts before ``position`` and ends after it."""
        before = bisect_left(self._starts, position)
        return before > 0 and self._reach[before - 1] > position


def without_overlaps(ranked: Sequence[Span]) -> list[Span]:
    """The spans in ``ranked`` order (best supported first), each kept unless it overlaps one kept before it;
    returned in text order."""
    starts: list[int] = []  # of the kept spans, which never overlap: in the same order, their ends rise too
    ends: list[int] = []
    kept: list[Span] = []
    for span in ranked:
        before = bisect_left(starts, span.end)
        if before > 0 and ends[before - 1] > span.start:
            continue
        place = bisect_left(starts, span.start)
        starts.insert(place, span.start)
        ends.insert(place, span.end)
        kept.append(span)
    return sorted(kept, key=lambda span: span.start)
