"""Where the span tagger witnesses names: which kinds it reads for in an annotation, and the names that stand
without its witness (``AnnotatorConfig.untagged_kinds``: by default none, the packaged tagger reads for every kind
it knows; docs/annotation.md), and the tagger run in a thread of its own beside the linker."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from medlink.linking.annotation.tagger import SpanTagger, TaggedSpan
from medlink.linking.mentions.branches import ENTITY_BRANCHES, BranchScope, has_tree_numbers
from medlink.terminology import Terminology


def kinds_of(entity_type: str, known: Sequence[str]) -> tuple[str, ...]:
    """The kinds of ``known`` that ``entity_type`` means: the same word in any case, else a kind with the same
    MeSH branches ("Drug" is "Chemical")."""
    same = tuple(kind for kind in known if kind.casefold() == entity_type.casefold())
    if same or entity_type.casefold() not in ENTITY_BRANCHES:
        return same
    branches = ENTITY_BRANCHES[entity_type.casefold()]
    return tuple(kind for kind in known if ENTITY_BRANCHES.get(kind.casefold()) == branches)


def tagging(
    terminology: Terminology,
    tagger: SpanTagger | None,
    tagged_kinds: tuple[str, ...] | None,
    untagged_kinds: tuple[str, ...],
) -> tuple[tuple[str, ...], BranchScope | None]:
    """The kinds ``tagger`` reads for here (of ``tagged_kinds``, the entity type's; ``None``: all it knows), and
    the concepts whose dictionary spans stand without its witness (``None``: none do). ``untagged_kinds`` apply
    to the packaged tagger, which they were chosen for (a tagger of one's own reads for all its kinds), where the
    kind of a name is known: from its concept's tree numbers, or from the entity type annotated; a terminology
    without tree numbers annotating every kind keeps the tagger for every kind, every span needing a witness, as
    a concept's kind cannot be told."""
    if tagger is None:
        return (), None
    every = tagged_kinds if tagged_kinds is not None else tagger.card.entity_types
    untagged = untagged_kinds if tagger.packaged else ()
    skipped = {kind for name in untagged for kind in kinds_of(name, every)}
    kinds = tuple(kind for kind in every if kind not in skipped)
    if has_tree_numbers(terminology):
        return kinds, BranchScope(terminology, untagged) if untagged else None
    return (kinds if tagged_kinds is not None else every), None


def tagged_spans_of(
    texts: Sequence[str], tagger: SpanTagger | None, kinds: tuple[str, ...]
) -> list[tuple[list[TaggedSpan], bool]]:
    """Per text, the tagger's spans of ``kinds``, and whether it found any span at all (of any kind): a text where
    it found nothing, unlike the abstracts it learned from, is one it cannot witness for."""
    if tagger is None or not kinds:
        return [([], False) for _ in texts]
    return [([span for span in spans if span.entity_type in kinds], bool(spans)) for spans in tagger.tag(texts)]


Tagged = list[tuple[list[TaggedSpan], bool]]


class TaggingInBackground:
    """:func:`tagged_spans_of` in a thread of its own, started at once, while the caller finds and links the
    dictionary's spans: ONNX Runtime lets go of the interpreter while it computes, so the tagger's work and the
    linker's overlap on two cores. Texts go in chunks, so leaving the ``with`` block early (an error) cancels
    what has not started."""

    chunk = 256

    def __init__(self, texts: Sequence[str], tagger: SpanTagger | None, kinds: tuple[str, ...]) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._chunks: list[Future[Tagged]] = []
        self._texts = len(texts)
        if tagger is not None and kinds:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="medlink-tagger")
            self._chunks = [
                self._pool.submit(tagged_spans_of, texts[first : first + self.chunk], tagger, kinds)
                for first in range(0, len(texts), self.chunk)
            ]

    def __enter__(self) -> TaggingInBackground:
        return self

    def __exit__(self, *_: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def result(self) -> Tagged:
        """Per text, as :func:`tagged_spans_of` gives it (waits for the tagger)."""
        if self._pool is None:
            return [([], False) for _ in range(self._texts)]
        return [found for chunk in self._chunks for found in chunk.result()]
