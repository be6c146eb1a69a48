"""Every concept mention of a document: candidate spans (:mod:`.spans`) linked by the linker with the document as
context, nil spans dropped, each qualified by ConText (:mod:`.context`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from medlink.linking.annotation.context import assess
from medlink.linking.annotation.lexicon import Lexicon
from medlink.linking.annotation.spans import Span, abbreviation_spans, dictionary_spans
from medlink.linking.mentions.branches import BranchScope, branches_for, has_tree_numbers
from medlink.linking.mentions.non_terms import function_words
from medlink.linking.results import LinkResult, Mention, Stage
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
    training documents taught (:mod:`.lexicon`)."""

    max_words: int = 8
    min_chars: int = 3
    abbreviations: bool = True
    context: bool = True
    branches: tuple[str, ...] | None = None
    lexicon: Lexicon = field(default_factory=Lexicon)


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
        return {"start": self.start, "end": self.end, "text": self.text, "concepts": list(self.concepts),
                "preferred_names": list(self.preferred_names), "score": self.score, "stage": self.stage,
                "negated": self.negated, "uncertain": self.uncertain, "reason": self.reason}  # fmt: skip


def annotate_many(linker: LinksMentions, texts: Sequence[str],
                  config: AnnotatorConfig = AnnotatorConfig()) -> list[list[Annotation]]:  # fmt: skip
    """The annotations of each text, in text order; all spans of all texts are linked in one batch."""
    per_text = [find_spans(linker.terminology, text, config) for text in texts]
    lexicon = config.lexicon
    to_link = [Mention(span.long_form or span.text, text) for text, spans in zip(texts, per_text, strict=True)
               for span in spans if not lexicon.knows(span.key)]  # fmt: skip
    results = iter(linker.link_many(to_link))
    scope = _scope(linker.terminology, config.branches)
    annotated = []
    for text, spans in zip(texts, per_text, strict=True):
        found = []
        for span in spans:
            result = _taught(span, lexicon, linker.terminology) if lexicon.knows(span.key) else next(results)
            if result.concepts and (scope is None or all(scope.allows(c) for c in result.concepts)):
                found.append(_annotation(text, span, result, config))
        annotated.append(found)
    return annotated


def find_spans(terminology: Terminology, text: str, config: AnnotatorConfig) -> list[Span]:
    """The candidate spans of ``text``, in order: names of the terminology or of the lexicon, then the short forms
    the text defines."""
    lexicon = config.lexicon

    def is_name(key: str) -> bool:
        return key not in lexicon.blocked and (lexicon.knows(key) or terminology.has_normalized(key))

    spans = dictionary_spans(text, is_name, terminology.normalizer, config.max_words, config.min_chars,
                             function_words().__contains__)  # fmt: skip
    if config.abbreviations:
        spans += abbreviation_spans(text, spans, is_name, terminology.normalizer)
    return sorted(spans, key=lambda span: span.start)


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
    negated = uncertain = False
    if config.context:
        finding = assess(text, span.start, span.end)
        negated, uncertain = finding.negated, finding.uncertain
        if finding.trigger is not None:
            reason += f"; {'negated' if negated else 'uncertain'} by {finding.trigger!r}"
    return Annotation(span.start, span.end, span.text, result.concepts, result.preferred_names, result.score,
                      result.stage.value, negated, uncertain, reason)  # fmt: skip
