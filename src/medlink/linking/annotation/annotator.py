"""Every concept mention of a document: candidate spans (:mod:`.spans`, and a span tagger's, :mod:`.tagger`, where
one is given) linked by the linker with the document as context, nil spans dropped, each qualified by ConText
(:mod:`.context`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from medlink.errors import MedlinkError
from medlink.linking.annotation.approximate import ApproximateNames
from medlink.linking.annotation.context import assess
from medlink.linking.annotation.corpus_lexicon import CorpusLexicon
from medlink.linking.annotation.lexicon import Lexicon
from medlink.linking.annotation.name_checks import NameChecks, has_capital
from medlink.linking.annotation.name_words import NameWords
from medlink.linking.annotation.spans import (
    NameTest,
    Overlaps,
    Span,
    abbreviation_spans,
    approximate_spans,
    dictionary_spans,
    tagged_spans,
    without_overlaps,
)
from medlink.linking.annotation.tagger import SpanTagger, TaggedSpan
from medlink.linking.annotation.witnesses import kinds_of, tagged_spans_of, tagging
from medlink.linking.mentions.abbreviations import find_abbreviations
from medlink.linking.mentions.branches import ENTITY_BRANCHES, BranchScope, branches_for, has_tree_numbers
from medlink.linking.mentions.non_terms import function_words
from medlink.linking.results import LinkResult, Mention, Stage
from medlink.options import setting
from medlink.terminology import Terminology
from medlink.terminology.name_statistics import SMALLEST_HEAD_SHARE


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
    training documents taught (:mod:`.lexicon`), over the corpus lexicon; corpus_lexicon: whether the corpus
    lexicon (``corpus``, :mod:`.corpus_lexicon`, what public corpora teach, for ``corpus_kinds`` — ``None``: every
    kind) is used, its forms taught where their out-of-fold precision is over ``lexicon_cut``; tagger: a span
    tagger whose spans join the dictionary's, each kind a witness for the other (see ``_best_supported``);
    tagged_kinds: the tagger's kinds kept (``None``: all it knows); untagged_kinds: kinds the tagger is not
    used for, whose names stand alone (see ``_tagging``); approximate: names found by trigram
    similarity (QuickUMLS-style) among the words no other span covers, linked as the name they resemble."""

    max_words: int = setting(8, "The longest name, in words, looked up in the text.", minimum=1, research=True)
    min_chars: int = setting(3, "Shorter spans are left out unless the text defines them.", minimum=1, research=True)
    abbreviations: bool = True
    context: bool = setting(True, "Mark each mention negated or uncertain by ConText triggers.")
    branches: tuple[str, ...] | None = None
    lexicon: Lexicon = field(default_factory=Lexicon)
    corpus_lexicon: bool = setting(
        True, "Use what public annotated corpora (BC5CDR, NCBI-disease) teach: their mention texts become spans."
    )
    # Chosen by cross-validation over BC5CDR and NCBI-disease documents, by the worse of the two (docs/annotation.md).
    lexicon_cut: float = setting(
        0.3, "The out-of-fold precision a corpus-lexicon form needs.", minimum=0.0, maximum=1.0, research=True
    )
    corpus: CorpusLexicon | None = None
    corpus_kinds: tuple[str, ...] | None = None
    tagger: SpanTagger | None = None
    tagged_kinds: tuple[str, ...] | None = None
    # Cross-validated over BC5CDR and NCBI-disease documents the tagger never saw (docs/annotation.md): diseases are
    # annotated better without it (the worse corpus 0.734 against 0.729), chemicals far better with it (0.849/0.754).
    untagged_kinds: tuple[str, ...] = setting(
        ("Disease",),
        "Kinds the span tagger is not used for: their names stand without its witness.",
        metavar="KIND,…",
        research=True,
    )
    approximate: ApproximateNames | None = None
    name_checks: bool = setting(
        True,
        "Apply the terminology's own checks: short forms in capitals read as words, category words alone.",
        research=True,
    )
    # Cross-validated over BC5CDR and NCBI-disease training documents, by the worse of the two (docs/annotation.md).
    category_share: float = setting(
        0.0125,
        "A one-word name ending at least this share of the terminology's longer names is a category, no mention alone.",
        minimum=SMALLEST_HEAD_SHARE,
        maximum=1.0,
        research=True,
    )

    def __post_init__(self) -> None:
        _checked_kinds(self)


DEFAULT_BRANCHES = ("C", "F03", "D")


def _checked_kinds(config: AnnotatorConfig) -> None:
    unknown = [kind for kind in config.untagged_kinds if kind.casefold() not in ENTITY_BRANCHES]
    if unknown:
        known = ", ".join(sorted(ENTITY_BRANCHES))
        raise MedlinkError(f"untagged_kinds: no kind {unknown[0]!r}; the kinds are {known}")


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
    config = replace(config, lexicon=lexicon_in_use(linker.terminology, config))
    kinds, exempt = tagging(linker.terminology, config.tagger, config.tagged_kinds, config.untagged_kinds)
    tagged = tagged_spans_of(texts, config.tagger, kinds)
    words = NameWords(linker.terminology, config.lexicon)  # shared by the texts: their words repeat
    checks = NameChecks(linker.terminology, config.category_share)
    per_text = [
        find_spans(linker.terminology, text, config, spans, words, checks)
        for text, (spans, _) in zip(texts, tagged, strict=True)
    ]
    lexicon = config.lexicon
    to_link = [
        Mention(_linked_text(span), text)
        for text, spans in zip(texts, per_text, strict=True)
        for span in spans
        if not span.taught
    ]
    results = iter(linker.link_many(to_link))
    scope = _scope(linker.terminology, config.branches)
    annotated = []
    taught: dict[str, LinkResult] = {}  # a batch's taught texts repeat
    for text, spans, (witnesses, read) in zip(texts, per_text, tagged, strict=True):
        linked = {}
        for span in spans:
            result = _taught(span, lexicon, linker.terminology, taught) if span.taught else next(results)
            if result.concepts and (scope is None or all(scope.allows(c) for c in result.concepts)):
                linked[span] = result
        # A text where the tagger found nothing keeps the dictionary's spans, which never overlap, in text order.
        kept = _best_supported(linked, witnesses, exempt) if read else list(linked)
        annotated.append([_annotation(text, span, linked[span], config) for span in kept])
    return annotated


def _best_supported(
    linked: dict[Span, LinkResult], tagged: Sequence[TaggedSpan], exempt: BranchScope | None
) -> list[Span]:
    """Where spans overlap, the best supported one. With a tagger, a span needs two witnesses: a tagger span is
    also a name (:func:`find_spans` keeps no other: on BC5CDR dev, the tagger's spans that only the dense search
    could link were wrong four times in five), and a dictionary span must be one the tagger also found
    (overlapping one), unless its concepts are all of kinds the tagger is not used for (``exempt``); the
    annotators' own texts (the lexicon) and the text's short forms need none. Order: the lexicon's, the tagger's,
    then the longest."""

    near_tagged = Overlaps(tagged)

    def needs_witness(span: Span) -> bool:
        return exempt is None or not all(exempt.allows(concept) for concept in linked[span].concepts)

    def supported(span: Span) -> bool:
        return (
            span.taught
            or span.long_form is not None
            or span.tagged is not None
            or not needs_witness(span)
            or near_tagged(span)
        )

    ranked = sorted(
        (span for span in linked if supported(span)),
        key=lambda s: (not s.taught, s.tagged is None, s.start - s.end, s.start),
    )
    return without_overlaps(ranked)


def find_spans(
    terminology: Terminology,
    text: str,
    config: AnnotatorConfig,
    tagged: Sequence[TaggedSpan] = (),
    words: NameWords | None = None,
    checks: NameChecks | None = None,
) -> list[Span]:
    """The candidate spans of ``text``, in order: names of the terminology or of the lexicon (and, where
    ``config.approximate`` is set, names resembling the words left over), the short forms the text defines, and
    the spans the tagger found (``tagged``) that are names too, which may overlap the others: annotation keeps the
    best supported. A text the lexicon teaches is no lesson where the text defines it as a short form of its own
    ("dry eye syndrome (DES)" is not the DES annotators meant elsewhere): there it is linked with the text. A name
    of the terminology is a span where it stands as written (:mod:`.name_checks`: short forms in capitals,
    category words)."""
    lexicon = config.lexicon
    short_forms = find_abbreviations(text) if lexicon.concepts or config.abbreviations else {}
    defined = frozenset(terminology.normalizer(short) for short in short_forms) if lexicon.concepts else frozenset()

    def taught(key: str) -> bool:
        return lexicon.knows(key) and key not in defined

    checks = checks or NameChecks(terminology, config.category_share)
    words = words or NameWords(terminology, lexicon)
    capitals = has_capital(text)

    def named(key: str, written: str = "") -> bool:  # by the terminology, standing as written
        return words.is_name(key) and (not config.name_checks or checks.stands(key, written, capitals))

    def is_name(key: str, written: str = "") -> bool:
        return key not in lexicon.blocked and (taught(key) or named(key, written))

    spans = dictionary_spans(
        text,
        is_name,
        terminology.normalizer,
        config.max_words,
        config.min_chars,
        function_words().__contains__,
        words,
        words.runs,
    )
    if config.approximate is not None:
        near = approximate_spans(
            text,
            spans,
            config.approximate.nearest,
            terminology.normalizer,
            config.max_words,
            config.min_chars,
            function_words().__contains__,
        )
        # the name it resembles must stand as written here too ("the syndrome" is no nearer a mention than before)
        spans += [span for span in near if span.near is not None and is_name(span.near.name, span.text)]
    if config.abbreviations:
        spans += abbreviation_spans(text, short_forms, spans, is_name, terminology.normalizer)
    spans += [span for span in tagged_spans(tagged, text, terminology.normalizer) if is_name(span.key, span.text)]
    return sorted(_lessons(spans, taught, lexicon, named, text), key=lambda span: span.start)


_AROUND = 60  # characters each side of a span that say whether its text is written in capitals throughout


def _lessons(
    spans: list[Span], taught: Callable[[str], bool], lexicon: Lexicon, named: NameTest, text: str
) -> list[Span]:
    """``spans`` of ``text`` with the lexicon's lessons marked; a span only the lexicon named, written otherwise
    than it teaches ("pan" for its "PAN"; "HIT" in a note written in capitals), is dropped."""
    marked = []
    for span in spans:
        if span.long_form is not None or span.near is not None or not taught(span.key):
            marked.append(span)
        elif lexicon.teaches(span.key, span.text, text[max(0, span.start - _AROUND) : span.end + _AROUND]):
            marked.append(replace(span, taught=True))
        elif named(span.key, span.text):
            marked.append(span)
    return marked


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
        names = tuple(terminology.concept_preferred_name(c) if c in terminology else c for c in concepts)
        result = LinkResult(span.text, concepts, Stage.EXACT, 1.0, span.text, names, reason=lexicon.reason(span.key))
        made[memo] = result
    return result


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
