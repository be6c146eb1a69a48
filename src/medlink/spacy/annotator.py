"""The ``medlink_annotator`` spaCy component: finds and links the concept mentions of a document itself, with no
upstream NER (:mod:`medlink.linking.annotation`).

Each mention becomes an entity (``doc.ents``, labelled ``label``; mentions that overlap an entity already there are
left out), with ``span._.medlink_data`` / ``span._.medlink`` / ``span._.concepts`` as the ``medlink_linker``
component sets them, and ``span._.negated`` / ``span._.uncertain`` from ConText.

    nlp = spacy.blank("en")
    nlp.add_pipe("medlink_annotator", config={"entity_type": "Disease"})   # the embedded default
    [(e.text, e._.concepts, e._.negated) for e in nlp("No sign of pneumonia.").ents]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from medlink.linking import Linker, LinkResult, Stage
from medlink.linking.annotation.annotator import Annotation, AnnotatorConfig, packaged_span_sources
from medlink.linking.mentions.branches import branches_for
from medlink.spacy.component import register_extensions


class MedlinkAnnotatorComponent:
    def __init__(self, linker: Linker, config: AnnotatorConfig, label: str) -> None:
        register_extensions()
        for flag in ("negated", "uncertain"):
            if not Span.has_extension(flag):
                Span.set_extension(flag, default=False)
        self.linker, self.config, self.label = linker, config, label

    def __call__(self, doc: Doc) -> Doc:
        self._annotate([doc])
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 64) -> Iterator[Doc]:
        docs = iter(docs)
        while batch := list(islice(docs, batch_size)):
            self._annotate(batch)
            yield from batch

    def _annotate(self, docs: list[Doc]) -> None:
        for doc, found in zip(docs, self.linker.annotate_many([doc.text for doc in docs], self.config), strict=True):
            spans = []
            for annotation in found:
                span = doc.char_span(annotation.start, annotation.end, label=self.label, alignment_mode="expand")
                if span is not None:
                    span._.medlink_data = _result(annotation).to_dict()
                    span._.negated, span._.uncertain = annotation.negated, annotation.uncertain
                    spans.append(span)
            doc.ents = filter_spans([*doc.ents, *spans])


def _result(annotation: Annotation) -> LinkResult:
    return LinkResult(
        annotation.text,
        annotation.concepts,
        Stage(annotation.stage),
        annotation.score,
        preferred_names=annotation.preferred_names,
        reason=annotation.reason,
    )


_DEFAULTS = {
    "index": None,
    "terminology": None,
    "exact_only": False,
    "entity_type": None,
    "label": "CONCEPT",
    "context": True,
    "tagger": "auto",
    "corpus_lexicon": True,
}


@Language.factory("medlink_annotator", default_config=_DEFAULTS)
def make_medlink_annotator(
    nlp: Language,
    name: str,
    index: str | None,
    terminology: str | None,
    exact_only: bool,
    entity_type: str | None,
    label: str,
    context: bool,
    tagger: str,
    corpus_lexicon: bool,
) -> MedlinkAnnotatorComponent:
    """``index`` / ``terminology`` / ``exact_only`` as for ``medlink_linker``; ``entity_type``: annotate only
    concepts of this kind (its MeSH branches); ``label``: the entities' label (default: the entity type, upper
    case, else ``CONCEPT``); ``tagger``: ``auto`` (the packaged span tagger when installed), ``none`` or a
    tagger folder; ``corpus_lexicon``: use what public corpora teach (the packaged corpus lexicon)."""
    linker = Linker.load(Path(index) if index else None, terminology=terminology, exact_only=exact_only)
    config = packaged_span_sources(
        AnnotatorConfig(
            context=context,
            branches=branches_for(entity_type) if entity_type else None,
            corpus_lexicon=corpus_lexicon,
        ),
        tagger,
        entity_type,
    )
    return MedlinkAnnotatorComponent(
        linker, config, entity_type.upper() if entity_type and label == "CONCEPT" else label
    )
