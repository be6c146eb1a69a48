"""The ``medlink_linker`` spaCy component: links every entity of a document.

For each entity (``doc.ents``, optionally only some labels) it sets ``span._.medlink`` (the
:class:`~medlink.linking.LinkResult`) and ``span._.concepts`` (its concept ids, best first). The document's text
is handed to the linker, so abbreviations defined in it are expanded ("Wilson disease (WD) … WD"). What the span
stores is the result's plain dictionary (``span._.medlink_data``), so documents serialize, cross ``n_process``
workers and ``DocBin`` files; ``span._.medlink`` rebuilds the record from it.

    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "DISEASE", "pattern": "heart attack"}])
    nlp.add_pipe("medlink_linker", config={"index": None})   # the embedded default; or an index folder
    [span._.concepts for span in nlp("She had a heart attack.").ents]   # [('MESH:D009203',)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc, Span

from medlink.linking import Linker, LinkerConfig, LinkResult, Mention
from medlink.options import settings_of


def register_extensions() -> None:
    # spaCy's extension registry is process-wide; registering once (and not forcing) leaves a user's own alone.
    if not Span.has_extension("medlink_data"):
        Span.set_extension("medlink_data", default=None)
    if not Span.has_extension("medlink"):
        Span.set_extension("medlink", getter=_result_of)
    if not Span.has_extension("concepts"):
        Span.set_extension(
            "concepts", getter=lambda span: tuple(span._.medlink_data["concepts"]) if span._.medlink_data else ()
        )


def _result_of(span: Span) -> LinkResult | None:
    data = span._.medlink_data
    return LinkResult.from_dict(data) if data else None


class MedlinkLinkerComponent:
    """Links the entities of documents; documents of one ``nlp.pipe`` batch are linked in one linker call."""

    def __init__(self, linker: Linker, labels: Iterable[str] | None = None, use_document: bool = True) -> None:
        register_extensions()
        self.linker = linker
        self.entity_labels = frozenset(labels) if labels else None
        self.use_document = use_document

    @property
    def labels(self) -> tuple[str, ...]:
        """The entity labels linked (empty: every label); spaCy lists them in the pipeline's meta."""
        return tuple(sorted(self.entity_labels or ()))

    def __call__(self, doc: Doc) -> Doc:
        self._link([doc])
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        docs = iter(docs)
        while batch := list(islice(docs, batch_size)):
            self._link(batch)
            yield from batch

    def _link(self, docs: list[Doc]) -> None:
        kept = self.entity_labels
        spans = [span for doc in docs for span in doc.ents if kept is None or span.label_ in kept]
        mentions = [
            Mention(
                span.text, span.doc.text if self.use_document else None, span.start_char, span.end_char, span.label_
            )
            for span in spans
        ]
        for span, result in zip(spans, self.linker.link_many(mentions), strict=True):
            span._.medlink_data = result.to_dict()


_DEFAULTS: dict[str, Any] = {
    "index": None,
    "terminology": None,
    "exact_only": False,
    "sieves": None,
    "nil_threshold": None,
    "labels": None,
    "use_document": True,
    "linker": {},
}


@Language.factory("medlink_linker", default_config=_DEFAULTS)
def make_medlink_linker(
    nlp: Language,
    name: str,
    index: str | None,
    terminology: str | None,
    exact_only: bool,
    sieves: str | None,
    nil_threshold: float | None,
    labels: list[str] | None,
    use_document: bool,
    linker: dict[str, Any],
) -> MedlinkLinkerComponent:
    """``index``: an index folder (default: the embedded MeSH default, exact → dense); ``terminology`` with
    ``exact_only``: exact match over a compiled terminology; ``labels``: link only these entity labels;
    ``nil_threshold``: dense decisions scoring below it are nil (default: the index's calibrated one);
    ``linker``: any other :class:`~medlink.linking.LinkerConfig` setting, by field name (``{"branches": ["C"],
    "respell": false}``), checked as ``medlink link --config`` checks a file's."""
    config = settings_of(LinkerConfig, linker, where=f"spaCy component {name!r}, config 'linker'")
    if nil_threshold is not None:
        config = replace(config, nil_threshold=nil_threshold)
    loaded = Linker.load(
        Path(index) if index else None, terminology=terminology, exact_only=exact_only, sieves=sieves, config=config
    )
    return MedlinkLinkerComponent(loaded, labels, use_document)
