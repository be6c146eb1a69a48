"""The candidate spans of one text: the runs of its words that are names of the terminology or of the lexicon (and,
where asked, names resembling the words left over), the short forms the text defines, and the span tagger's spans
that are names too. They may overlap: annotation keeps the best supported (:mod:`.annotator`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from medlink.linking.annotation.config import AnnotatorConfig
from medlink.linking.annotation.coordinations import coordination_ending
from medlink.linking.annotation.name_checks import NameChecks, has_capital
from medlink.linking.annotation.name_words import NameWords
from medlink.linking.annotation.spans import (
    Overlaps,
    Span,
    abbreviation_spans,
    approximate_spans,
    dictionary_spans,
    tagged_spans,
)
from medlink.linking.annotation.tagger import TaggedSpan
from medlink.linking.mentions.abbreviations import find_abbreviations
from medlink.linking.mentions.non_terms import function_words
from medlink.terminology import Terminology

_AROUND = 60  # characters each side of a span that say whether its text is written in capitals throughout


class TextNames:
    """Which runs of one text are names. A text the lexicon teaches is no lesson where the text defines it as a short
    form of its own ("dry eye syndrome (DES)" is not the DES annotators meant elsewhere): there it is linked with the
    text. A name of the terminology is a span where it stands as written (:mod:`.name_checks`: short forms in
    capitals, category words). ``words`` and ``checks`` are shared by a batch's texts."""

    def __init__(
        self,
        terminology: Terminology,
        text: str,
        config: AnnotatorConfig,
        words: NameWords | None = None,
        checks: NameChecks | None = None,
    ) -> None:
        self.terminology, self.text, self.config = terminology, text, config
        self.lexicon = lexicon = config.lexicon
        self.short_forms = find_abbreviations(text) if lexicon.concepts or config.abbreviations else {}
        normalize = terminology.normalizer
        self.defined = frozenset(normalize(short) for short in self.short_forms) if lexicon.concepts else frozenset()
        self.words = words or NameWords(terminology, lexicon)
        self.checks = checks or NameChecks(terminology, config.category_share)
        self.capitals = has_capital(text)

    def taught(self, key: str) -> bool:
        return self.lexicon.knows(key) and key not in self.defined

    def named(self, key: str, written: str = "") -> bool:
        """Whether the terminology names ``key``, standing as ``written`` here."""
        if not self.words.is_name(key):
            return False
        return not self.config.name_checks or self.checks.stands(key, written, self.capitals)

    def is_name(self, key: str, written: str = "") -> bool:
        return key not in self.lexicon.blocked and (self.taught(key) or self.named(key, written))

    def dictionary_spans(self) -> list[Span]:
        """The names, approximate names (``config.approximate``) and defined short forms, in text order."""
        config, text, normalize, words = self.config, self.text, self.terminology.normalizer, self.words
        skip = function_words().__contains__
        spans = dictionary_spans(
            text, self.is_name, normalize, config.max_words, config.min_chars, skip, words, words.runs
        )
        if config.approximate is not None:
            near = approximate_spans(
                text, spans, config.approximate.nearest, normalize, config.max_words, config.min_chars, skip
            )
            # the name it resembles must stand as written here too ("the syndrome" is no nearer a mention than before)
            spans += [span for span in near if span.near is not None and self.is_name(span.near.name, span.text)]
        if config.abbreviations:
            spans += abbreviation_spans(text, self.short_forms, spans, self.is_name, normalize)
        spans = self._lessons(spans)
        if config.coordinations:
            spans += self.coordinated_spans(spans)
        return sorted(spans, key=lambda span: span.start)

    def coordinated_spans(self, spans: Sequence[Span]) -> list[Span]:
        """The coordinations (:mod:`.coordinations`) that end in one of ``spans``, each from the longest run of
        modifiers next to its span whose conjuncts are all names and whose first starts inside no other span
        ("Epstein-Barr virus and cytomegalovirus infection" holds no "virus infection"); a coordination overlaps
        only the spans it holds, and annotation keeps it over them."""
        found = []
        taken = Overlaps(spans)
        for span in spans:
            if span.long_form is not None or span.near is not None:
                continue
            coordination = coordination_ending(self.text, span.start, span.end)
            if coordination is None:
                continue
            conjuncts = [self._conjunct(coordination.conjunct(i), span) for i in range(len(coordination.modifiers))]
            first = len(conjuncts)
            while first > 0 and conjuncts[first - 1] is not None:
                first -= 1
            starts = [start for start, _ in coordination.modifiers]
            while first < len(conjuncts) and taken.around(starts[first]):
                first += 1
            if first < len(conjuncts):
                text = self.text[starts[first] : span.end]
                parts = (*(c for c in conjuncts[first:] if c is not None), span)
                key = self.terminology.normalizer(text)
                found.append(Span(starts[first], span.end, text, key=key, parts=parts))
        return found

    def _conjunct(self, text: str, last: Span) -> Span | None:
        """A conjunct with the shared head ("breast cancer") of the coordination ending in ``last``, as a span to
        link, if it is a name."""
        key = self.terminology.normalizer(text)
        if not key or not self.is_name(key, text):
            return None
        lessons = self._lessons([Span(last.start, last.end, text, key=key)])
        return lessons[0] if lessons else None

    def tagged_spans(self, tagged: Sequence[TaggedSpan]) -> list[Span]:
        """The tagger's spans that are names, in text order."""
        spans = tagged_spans(tagged, self.text, self.terminology.normalizer)
        return sorted(self._lessons([s for s in spans if self.is_name(s.key, s.text)]), key=lambda span: span.start)

    def _lessons(self, spans: list[Span]) -> list[Span]:
        """``spans`` with the lexicon's lessons marked; a span only the lexicon named, written otherwise than it
        teaches ("pan" for its "PAN"; "HIT" in a note written in capitals), is dropped."""
        marked = []
        text = self.text
        for span in spans:
            if span.long_form is not None or span.near is not None or not self.taught(span.key):
                marked.append(span)
            elif self.lexicon.teaches(span.key, span.text, text[max(0, span.start - _AROUND) : span.end + _AROUND]):
                marked.append(replace(span, taught=True))
            elif self.named(span.key, span.text):
                marked.append(span)
        return marked


def find_spans(
    terminology: Terminology,
    text: str,
    config: AnnotatorConfig,
    tagged: Sequence[TaggedSpan] = (),
    words: NameWords | None = None,
    checks: NameChecks | None = None,
) -> list[Span]:
    """The candidate spans of ``text`` in text order, ``tagged`` the tagger's spans (see :class:`TextNames`)."""
    names = TextNames(terminology, text, config, words, checks)
    return sorted(names.dictionary_spans() + names.tagged_spans(tagged), key=lambda span: span.start)
