"""Every concept mention of a document: candidate spans (:mod:`.spans`, and a span tagger's, :mod:`.tagger`, where
one is given) linked by the linker with the document as context, nil spans dropped, each qualified by ConText
(:mod:`.context`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from medlink.linking.annotation.candidates import TextNames
from medlink.linking.annotation.config import AnnotatorConfig
from medlink.linking.annotation.context import assess
from medlink.linking.annotation.corpus_lexicon import CorpusLexicon
from medlink.linking.annotation.lexicon import Lexicon
from medlink.linking.annotation.name_checks import NameChecks
from medlink.linking.annotation.name_words import NameWords
from medlink.linking.annotation.spans import Overlaps, Span, without_overlaps
from medlink.linking.annotation.tagger import SpanTagger, TaggedSpan
from medlink.linking.annotation.witnesses import TaggingInBackground, kinds_of, tagging
from medlink.linking.mentions.branches import BranchScope, branches_for, has_tree_numbers
from medlink.linking.mentions.composites import composite_result
from medlink.linking.results import LinkResult, Mention, Stage
from medlink.terminology import Terminology


class LinksMentions(Protocol):
    """What annotation needs of a linker."""

    terminology: Terminology

    def link_many(self, mentions: Sequence[str | Mention]) -> list[LinkResult]: ...


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
    """The annotations of each text, in text order. The span tagger reads the texts in the background while the
    dictionary's spans of all texts are found and linked in one batch; then the tagger's spans that are names are
    linked, in a second."""
    terminology = linker.terminology
    kinds, exempt = tagging(terminology, config.tagger, config.tagged_kinds, config.untagged_kinds)
    memo: dict[str, LinkResult] = {}  # a batch's taught texts repeat
    with TaggingInBackground(texts, config.tagger, kinds) as tagger:
        config = replace(config, lexicon=lexicon_in_use(terminology, config))
        words = NameWords(terminology, config.lexicon)  # shared by the texts: their words repeat
        checks = NameChecks(terminology, config.category_share)
        readers = [TextNames(terminology, text, config, words, checks) for text in texts]
        found = [reader.dictionary_spans() for reader in readers]
        linked = _linked(linker, texts, found, config.lexicon, memo)
        tagged = tagger.result()
    named = [reader.tagged_spans(spans) for reader, (spans, _) in zip(readers, tagged, strict=True)]
    for links, more in zip(linked, _linked(linker, texts, named, config.lexicon, memo), strict=True):
        links.update(more)
    scope = _scope(terminology, config.branches)
    annotated = []
    for text, first, second, links, (witnesses, read) in zip(texts, found, named, linked, tagged, strict=True):
        spans = sorted(first + second, key=lambda span: span.start)
        kept_links = {
            span: links[span]
            for span in spans
            if links[span].concepts and (scope is None or all(scope.allows(c) for c in links[span].concepts))
        }
        # A text where the tagger found nothing keeps the dictionary's spans, which overlap only where a coordination
        # holds its conjuncts.
        kept = (
            _best_supported(kept_links, witnesses, exempt)
            if read
            else without_overlaps(sorted(kept_links, key=_support))
        )
        annotated.append([_annotation(text, span, kept_links[span], config) for span in kept])
    return annotated


def _linked(
    linker: LinksMentions,
    texts: Sequence[str],
    spans: Sequence[Sequence[Span]],
    lexicon: Lexicon,
    memo: dict[str, LinkResult],
) -> list[dict[Span, LinkResult]]:
    """Per text, each span's link: the lexicon's for a taught span, else the linker's, with the text as context
    (one batch for all texts); a coordination's is its conjuncts' (:func:`composite_result`), nil unless every
    conjunct links."""
    # each span linked once: a coordination's last conjunct is a span of its own too
    to_link = list(
        dict.fromkeys(
            (number, piece)
            for number, own in enumerate(spans)
            for span in own
            for piece in span.parts or (span,)
            if not piece.taught
        )
    )
    found = (
        linker.link_many([Mention(_linked_text(piece), texts[number]) for number, piece in to_link]) if to_link else []
    )
    results = dict(zip(to_link, found, strict=True))
    terminology = linker.terminology

    def link(number: int, span: Span) -> LinkResult:
        pieces = [
            _taught(p, lexicon, terminology, memo) if p.taught else results[number, p] for p in span.parts or (span,)
        ]
        if not span.parts:
            return pieces[0]
        parts = [piece.text for piece in span.parts]
        joined = composite_result(span.text, parts, pieces, lambda concept: _preferred_name(terminology, concept))
        return joined or LinkResult(span.text, (), Stage.NIL, reason="a conjunct links to nothing")

    return [{span: link(number, span) for span in own} for number, own in enumerate(spans)]


def _best_supported(
    linked: dict[Span, LinkResult], tagged: Sequence[TaggedSpan], exempt: BranchScope | None
) -> list[Span]:
    """Where spans overlap, the best supported one. With a tagger, a span needs two witnesses: a tagger span is
    also a name (:func:`find_spans` keeps no other: on BC5CDR dev, the tagger's spans that only the dense search
    could link were wrong four times in five), and a dictionary span must be one the tagger also found
    (overlapping one), unless its concepts are all of kinds the tagger is not used for (``exempt``); the
    annotators' own texts (the lexicon) and the text's short forms need none. Order: :func:`_support`."""

    near_tagged = Overlaps(tagged)

    def needs_witness(span: Span) -> bool:
        return exempt is None or not all(exempt.allows(concept) for concept in linked[span].concepts)

    def supported(span: Span) -> bool:
        if span.parts and near_tagged.around(span.start):
            return False  # the tagger read a mention across the coordination's start ("of breast")
        return (
            span.taught
            or span.long_form is not None
            or span.tagged is not None
            or not needs_witness(span)
            or near_tagged(span)
        )

    return without_overlaps(sorted((span for span in linked if supported(span)), key=_support))


def _support(span: Span) -> tuple:
    """Where spans overlap, the better supported sorts first: the lexicon's and coordinations (which hold the spans
    they overlap), the tagger's, then the longest."""
    return (not (span.taught or span.parts), span.tagged is None, span.start - span.end, span.start)


def with_span_sources(
    config: AnnotatorConfig,
    tagger: SpanTagger | None,
    corpus: CorpusLexicon | None,
    entity_type: str | None = None,
) -> AnnotatorConfig:
    """``config`` with ``tagger`` and the corpus lexicon ``corpus``, each keeping only what it has of
    ``entity_type`` when one is given (nothing when it does not know that kind)."""
    kinds = kinds_of(entity_type, tagger.card.entity_types) if tagger is not None and entity_type else None
    corpus_kinds = kinds_of(entity_type, corpus.kinds) if corpus is not None and entity_type else None
    return replace(config, tagger=tagger, tagged_kinds=kinds, corpus=corpus, corpus_kinds=corpus_kinds)


def packaged_span_sources(
    config: AnnotatorConfig, tagger: str | None = "auto", entity_type: str | None = None
) -> AnnotatorConfig:
    """``config`` with the span tagger ``tagger`` names (:func:`.tagger.choose_tagger`) and, unless
    ``config.corpus_lexicon`` is off, the corpus lexicon that ships beside the packaged tagger (``medlink[tagger]``),
    for ``entity_type``."""
    from medlink.linking.annotation.corpus_lexicon import packaged_corpus_lexicon
    from medlink.linking.annotation.tagger import choose_tagger

    corpus = packaged_corpus_lexicon() if config.corpus_lexicon else None
    return with_span_sources(config, choose_tagger(tagger), corpus, entity_type)


def lexicon_in_use(terminology: Terminology, config: AnnotatorConfig) -> Lexicon:
    """``config.lexicon`` over what the corpus lexicon teaches for ``terminology``, when it is in use."""
    if not config.corpus_lexicon or config.corpus is None:
        return config.lexicon
    return config.corpus.lexicon(terminology, config.corpus_kinds, config.lexicon_cut).under(config.lexicon)


def _linked_text(span: Span) -> str:
    """What is linked for a span: a short form's long form, an approximate span's name, else its text."""
    return span.long_form or (span.near.name if span.near else span.text)


def _taught(span: Span, lexicon: Lexicon, terminology: Terminology, made: dict[str, LinkResult]) -> LinkResult:
    """The link the lexicon teaches for ``span``, remembered in ``made`` by the text and key."""
    memo = f"{span.text}\0{span.key}"
    result = made.get(memo)
    if result is None:
        concepts = tuple(lexicon.concepts[span.key])
        names = tuple(_preferred_name(terminology, c) for c in concepts)
        result = LinkResult(span.text, concepts, Stage.EXACT, 1.0, span.text, names, reason=lexicon.reason(span.key))
        made[memo] = result
    return result


def _preferred_name(terminology: Terminology, concept: str) -> str:
    """A lexicon may teach ids the terminology lacks (NCBI-disease's OMIM ids over MeSH): those stand as themselves."""
    return terminology.concept_preferred_name(concept) if concept in terminology else concept


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
