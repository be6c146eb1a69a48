"""Every concept mention of a document: candidate spans (:mod:`.spans`, and a span tagger's, :mod:`.tagger`, where
one is given) linked by the linker with the document as context, nil spans dropped, each qualified by ConText
(:mod:`.context`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from medlink.linking.annotation.approximate import ApproximateNames
from medlink.linking.annotation.context import assess
from medlink.linking.annotation.lexicon import Lexicon
from medlink.linking.annotation.spans import (
    Overlaps,
    Span,
    abbreviation_spans,
    approximate_spans,
    dictionary_spans,
    tagged_spans,
    without_overlaps,
)
from medlink.linking.annotation.tagger import SpanTagger, TaggedSpan
from medlink.linking.mentions.branches import BranchScope, branches_for, has_tree_numbers
from medlink.linking.mentions.non_terms import function_words
from medlink.linking.results import LinkResult, Mention, Stage
from medlink.options import setting
from medlink.terminology import Terminology


class LinksMentions(Protocol):
    """What annotation needs of a linker."""

    terminology: Terminology

    def link_many(self, mentions: Sequence[str | Mention]) -> list[LinkResult]: ...


@dataclass(frozen=True)
class AnnotatorConfig:
    """max_words: the longest name looked up; min_chars: shorter spans are left out (two-letter words are mostly
    abbreviations, which count only where the text defines them); abbreviations: short forms the text defines
    are annotated as their long form; context: negation and uncertainty are assessed; branches: only concepts
    under these tree-number prefixes are annotated (``None``: for a terminology with tree numbers, MeSH's diseases
    and chemicals, C, F03 and D, not "Patients" or "Humans"; ``()``: every concept); lexicon: what annotated
    training documents taught (:mod:`.lexicon`); tagger: a span tagger whose spans join the dictionary's, each
    kind a witness for the other (see ``_best_supported``); tagged_kinds: the tagger's
    kinds kept (``None``: all it knows); approximate: names found by trigram similarity (QuickUMLS-style) among
    the words no other span covers, linked as the name they resemble."""

    max_words: int = setting(8, "The longest name, in words, looked up in the text.", minimum=1, research=True)
    min_chars: int = setting(3, "Shorter spans are left out unless the text defines them.", minimum=1, research=True)
    abbreviations: bool = True
    context: bool = setting(True, "Mark each mention negated or uncertain by ConText triggers.")
    branches: tuple[str, ...] | None = None
    lexicon: Lexicon = field(default_factory=Lexicon)
    tagger: SpanTagger | None = None
    tagged_kinds: tuple[str, ...] | None = None
    approximate: ApproximateNames | None = None


DEFAULT_BRANCHES = ("C", "F03", "D")


@dataclass(frozen=True)
class Annotation:
    start: int
    end: int
    text: str
    concepts: tuple[str, ...]
    preferred_names: tuple[str, ...]
    score: float | None
    stage: str
    negated: bool = False
    uncertain: bool = False
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "concepts": list(self.concepts),
            "preferred_names": list(self.preferred_names),
            "score": self.score,
            "stage": self.stage,
            "negated": self.negated,
            "uncertain": self.uncertain,
            "reason": self.reason,
        }


def annotate_many(
    linker: LinksMentions, texts: Sequence[str], config: AnnotatorConfig = AnnotatorConfig()
) -> list[list[Annotation]]:
    """The annotations of each text, in text order; all spans of all texts are linked in one batch."""
    tagged = _tagged(texts, config)
    words = NameWords(linker.terminology, config.lexicon)  # shared by the texts: their words repeat
    per_text = [
        find_spans(linker.terminology, text, config, spans, words) for text, spans in zip(texts, tagged, strict=True)
    ]
    lexicon = config.lexicon
    to_link = [
        Mention(_linked_text(span), text)
        for text, spans in zip(texts, per_text, strict=True)
        for span in spans
        if not lexicon.knows(span.key)
    ]
    results = iter(linker.link_many(to_link))
    scope = _scope(linker.terminology, config.branches)
    annotated = []
    for text, spans, witnesses in zip(texts, per_text, tagged, strict=True):
        linked = {}
        for span in spans:
            result = _taught(span, lexicon, linker.terminology) if lexicon.knows(span.key) else next(results)
            if result.concepts and (scope is None or all(scope.allows(c) for c in result.concepts)):
                linked[span] = result
        # A text where the tagger found nothing (unlike the abstracts it learned from) keeps the dictionary's spans,
        # which never overlap and come in text order.
        kept = _best_supported(linked, witnesses, lexicon) if witnesses else list(linked)
        annotated.append([_annotation(text, span, linked[span], config) for span in kept])
    return annotated


class NameWords:
    """Whether a word of the text could be part of a name (of the terminology or the lexicon): its normalized
    words all are words of names. Remembered per word; a stand-alone "i" always could (it reads as the Roman
    numeral only after "type", "class", …)."""

    def __init__(self, terminology: Terminology, lexicon: Lexicon) -> None:
        self.normalize = terminology.normalizer
        self.words = terminology.name_words
        self.lexicon_words = frozenset(word for key in lexicon.concepts for word in key.split())
        self.seen: dict[str, bool] = {}

    def __call__(self, word: str) -> bool:
        known = self.seen.get(word)
        if known is None:
            known = self.seen[word] = word.casefold() == "i" or all(
                part in self.words or part in self.lexicon_words for part in self.normalize(word).split()
            )
        return known


def _best_supported(linked: dict[Span, LinkResult], tagged: Sequence[TaggedSpan], lexicon: Lexicon) -> list[Span]:
    """Where spans overlap, the best supported one. With a tagger, a span needs two witnesses: a tagger span is
    also a name (:func:`find_spans` keeps no other: on BC5CDR dev, the tagger's spans that only the dense search
    could link were wrong four times in five), and a dictionary span must be one the tagger also found
    (overlapping one); the annotators' own texts (the lexicon) and the text's short forms need none. Order: the
    lexicon's, the tagger's, then the longest."""

    near_tagged = Overlaps(tagged)

    def supported(span: Span) -> bool:
        return lexicon.knows(span.key) or span.long_form is not None or span.tagged is not None or near_tagged(span)

    ranked = sorted(
        (span for span in linked if supported(span)),
        key=lambda s: (not lexicon.knows(s.key), s.tagged is None, s.start - s.end, s.start),
    )
    return without_overlaps(ranked)


def find_spans(
    terminology: Terminology,
    text: str,
    config: AnnotatorConfig,
    tagged: Sequence[TaggedSpan] = (),
    words: NameWords | None = None,
) -> list[Span]:
    """The candidate spans of ``text``, in order: names of the terminology or of the lexicon (and, where
    ``config.approximate`` is set, names resembling the words left over), the short forms the text defines, and
    the spans the tagger found (``tagged``) that are names too, which may overlap the others: annotation keeps the
    best supported."""
    lexicon = config.lexicon

    def is_name(key: str) -> bool:
        return key not in lexicon.blocked and (lexicon.knows(key) or terminology.has_normalized(key))

    spans = dictionary_spans(
        text,
        is_name,
        terminology.normalizer,
        config.max_words,
        config.min_chars,
        function_words().__contains__,
        words or NameWords(terminology, lexicon),
    )
    if config.approximate is not None:
        spans += approximate_spans(
            text,
            spans,
            config.approximate.nearest,
            terminology.normalizer,
            config.max_words,
            config.min_chars,
            function_words().__contains__,
        )
    if config.abbreviations:
        spans += abbreviation_spans(text, spans, is_name, terminology.normalizer)
    spans += [span for span in tagged_spans(tagged, text, terminology.normalizer) if is_name(span.key)]
    return sorted(spans, key=lambda span: span.start)


def with_tagger(config: AnnotatorConfig, tagger: SpanTagger | None, entity_type: str | None = None) -> AnnotatorConfig:
    """``config`` with ``tagger``, keeping only its spans of ``entity_type`` when one is given (none when the
    tagger does not know that kind)."""
    kinds = None
    if tagger is not None and entity_type is not None:
        known = {kind.casefold(): kind for kind in tagger.card.entity_types}
        kinds = (known[entity_type.casefold()],) if entity_type.casefold() in known else ()
    return replace(config, tagger=tagger, tagged_kinds=kinds)


def _tagged(texts: Sequence[str], config: AnnotatorConfig) -> list[list[TaggedSpan]]:
    if config.tagger is None:
        return [[] for _ in texts]
    kinds = config.tagged_kinds
    return [
        [span for span in spans if kinds is None or span.entity_type in kinds] for spans in config.tagger.tag(texts)
    ]


def _linked_text(span: Span) -> str:
    """What is linked for a span: a short form's long form, an approximate span's name, else its text."""
    return span.long_form or (span.near.name if span.near else span.text)


def _taught(span: Span, lexicon: Lexicon, terminology: Terminology) -> LinkResult:
    concepts = tuple(lexicon.concepts[span.key])
    names = tuple(terminology.concept_preferred_name(c) if c in terminology else c for c in concepts)
    reason = f"annotated so in the training documents ({lexicon.counts.get(span.key, 0)} times)"
    return LinkResult(span.text, concepts, Stage.EXACT, 1.0, span.text, names, reason=reason)


def branches_of(terminology: Terminology, branches: tuple[str, ...], entity_type: str | None) -> tuple[str, ...] | None:
    """What ``--branches`` / ``--entity-type`` restrict annotation to: the branches as given; else an entity type's
    MeSH branches where the terminology has tree numbers (one without them, such as MEDIC, is taken to hold that
    kind already, and the type selects training mentions only); else ``None``, the default."""
    if branches:
        return branches
    return branches_for(entity_type) if entity_type and has_tree_numbers(terminology) else None


def _scope(terminology: Terminology, branches: tuple[str, ...] | None) -> BranchScope | None:
    if branches is None:
        return BranchScope(terminology, DEFAULT_BRANCHES) if has_tree_numbers(terminology) else None
    return BranchScope(terminology, branches) if branches else None


def _annotation(text: str, span: Span, result: LinkResult, config: AnnotatorConfig) -> Annotation:
    reason = result.reason
    if span.long_form is not None:
        reason = f"short form the text defines as {span.long_form!r}; {reason}"
    if span.near is not None:
        near = span.near
        reason = f"approximate match of the name {near.name!r} (trigram similarity {near.similarity:.2f}); {reason}"
    if span.tagged is not None:
        reason = f"span found by the tagger ({span.tagged}); {reason}"
    negated = uncertain = False
    if config.context:
        finding = assess(text, span.start, span.end)
        negated, uncertain = finding.negated, finding.uncertain
        if finding.trigger is not None:
            reason += f"; {'negated' if negated else 'uncertain'} by {finding.trigger!r}"
    return Annotation(
        span.start,
        span.end,
        span.text,
        result.concepts,
        result.preferred_names,
        result.score,
        result.stage.value,
        negated,
        uncertain,
        reason,
    )
