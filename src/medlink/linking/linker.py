"""The :class:`Linker`: mentions in, :class:`LinkResult` out, through an ordered list of sieves.

Mentions are normalized once, repeats are linked once (``link_many`` deduplicates and a bounded cache remembers
earlier keys), and each sieve gets the whole batch of mentions still undecided, so dense sieves encode in batches.
The first sieve that decides wins. Before the sieves, abbreviations defined in a mention's document are expanded
("WD" → "Wilson disease"), and a mention that matches no name exactly but splits into parts ("breast and ovarian
cancer") is linked part by part, when every part links. Afterwards: a decided score below the nil threshold
becomes ``nil`` (with the candidates kept, so the reason can be inspected), and with ``several_within`` set, every
candidate scoring within that margin of the best is claimed too (mentions that map to several concepts, Liang
et al.); with a concept counter (the encoder's count head), a retrieval decision claims as many of its best
candidates as the counter predicts the mention names. An empty mention is ``empty``. Nothing is random: the same
input always gives the same output.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Unpack, cast

from medlink.errors import MedlinkError
from medlink.linking.annotation.annotator import Annotation, AnnotatorConfig, annotate_many, packaged_span_sources
from medlink.linking.decisions import claim_counted, finish, judge_forms, judge_terms, not_found, reranked, unsearched
from medlink.linking.mentions.branches import BranchScope, type_scope
from medlink.linking.mentions.composites import linked_composites
from medlink.linking.mentions.non_terms import refusal
from medlink.linking.mentions.rewriting import MentionRewriter, best_reading
from medlink.linking.mentions.shorthand import shorthand_lexicon
from medlink.linking.results import LinkResult, Mention, Stage, mention_text
from medlink.linking.settings import (
    CandidateReranker,
    ConceptCounter,
    FormTest,
    LinkerConfig,
    LinkerParts,
    Sieve,
    TermTest,
)
from medlink.linking.sieves.exact import ExactSieve, prefer_literal, prefer_written_name
from medlink.linking.spec import SPECS, LinkerSpec, SpecOptions, check_option_names, linker_spec
from medlink.terminology import Terminology

__all__ = ["Linker", "LinkerConfig", "Sieve"]


# Longer keys are not cached: they hardly repeat, and a cache bounded by count must bound each entry's size too
# (NFKC turns one character into up to 18: a 1,000-character mention can make a key of 18,000).
LONGEST_CACHED_KEY = 256


class Linker:
    """Links mentions to the concepts of one terminology.

    Thread-safe (one batch is linked at a time; the encoder uses every core for it). A linker made by :meth:`load`
    pickles as its :class:`~medlink.linking.spec.LinkerSpec` and settings, and the copy rebuilds its terminology,
    index and encoder on first use, so it can be handed to process pools, spaCy's ``n_process`` and Spark workers.
    """

    # what an unpickled linker rebuilds
    _BUILT_ON_USE = (
        "terminology",
        "sieves",
        "counter",
        "term_test",
        "reranker",
        "form_test",
        "calibrated_nil_threshold",
    )

    def __init__(
        self,
        terminology: Terminology,
        sieves: Sequence[Sieve] | None = None,
        config: LinkerConfig | None = None,
        counter: ConceptCounter | None = None,
        term_test: TermTest | None = None,
        reranker: CandidateReranker | None = None,
        form_test: FormTest | None = None,
    ) -> None:
        self.terminology = terminology
        self.sieves: tuple[Sieve, ...] = tuple(sieves) if sieves is not None else (ExactSieve(terminology),)
        self._config = config or LinkerConfig()
        self.counter = counter
        self.term_test = term_test
        self.reranker = reranker
        self.form_test = form_test
        self.calibrated_nil_threshold: float | None = None  # the index's, which with_config keeps
        self.spec: LinkerSpec | None = None  # set by load; what pickling carries
        self._start_fresh()

    def _start_fresh(self) -> None:
        """The state a new linker and an unpickled copy start with: empty caches, nothing built yet."""
        self._cache: dict[str, LinkResult] = {}  # by normalized text, before abbreviations and literal preference
        self._by_text: dict[str, LinkResult] = {}  # final results of mentions given without a document
        self._scope: BranchScope | None = None  # of config.branches
        self._type_scopes: dict[str, BranchScope | None] = {}  # of the entity types mentions were given with
        self._rewriter_built: MentionRewriter | None = None
        self._default_annotation: AnnotatorConfig | None = None
        self._lock = threading.RLock()
        self._deferred: Callable[[], LinkerParts] | None = None  # the parts to build when exact match is not enough
        self._progress = False

    @classmethod
    def from_parts(cls, parts: LinkerParts) -> Linker:
        """A linker over parts assembled in memory (``medlink.linking.pipeline``: a terminology, index or encoder
        that is not saved, as tests and benchmarks make them). It cannot be pickled: :meth:`load` makes one that
        can."""
        linker = cls(
            parts.terminology,
            parts.sieves,
            parts.config,
            parts.counter,
            parts.term_test,
            parts.reranker,
            parts.form_test,
        )
        linker.calibrated_nil_threshold = parts.calibrated_nil_threshold
        return linker

    @classmethod
    def load(
        cls,
        spec: LinkerSpec | Path | str | None = None,
        *,
        config: LinkerConfig | None = None,
        progress: bool = False,
        **options: Unpack[SpecOptions],
    ) -> Linker:
        """The linker ``spec`` describes (:mod:`medlink.linking.spec`): with no arguments the embedded default (all
        of MeSH shipped with medlink, prebuilt: nothing is encoded or compiled), or a saved index's folder, or the
        ``options`` :func:`~medlink.linking.spec.linker_spec` reads (``Linker.load(exact_only=True)``,
        ``Linker.load(ranker="my-ranker/")`` …). ``config`` replaces the settings an index was calibrated with,
        keeping its calibrated nil threshold unless it sets one. Where the embedded default's index must still be
        built, exact hits are answered first and the index is built when a mention needs it."""
        if not isinstance(spec, SPECS):
            spec = linker_spec(spec, **options)
        elif options:
            check_option_names(options)  # an unknown one is named first
            raise MedlinkError("a LinkerSpec says everything: give it alone, or the options without it")
        if spec.index_ready():
            linker = cls.from_parts(spec.parts(config, progress))
        else:  # the index is built when a mention first needs it: exact hits are answered before that
            linker = cls.from_parts(spec.exact_parts(config, progress))
            linker._deferred = functools.partial(spec.parts, config, progress)
            linker._progress = progress  # shown while the index is built, and by a copy with other settings
        linker.spec = spec
        return linker

    # --- pickling: the spec travels, the heavy parts are rebuilt where the copy is used --------------------

    def __getstate__(self) -> dict[str, Any]:
        if self.spec is None:
            raise TypeError(
                "this Linker was assembled from parts and cannot be pickled; make it with Linker.load() "
                "(a LinkerSpec: an index folder, a terminology with exact_only, a ranker, or the embedded default)"
            )
        return {"spec": self.spec, "config": self.config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.spec = state["spec"]
        self._config = state["config"]
        self._start_fresh()

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set yet: an unpickled linker builds its parts on first use.
        if name not in Linker._BUILT_ON_USE or "spec" not in self.__dict__ or self.spec is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        with self._lock:
            if name not in self.__dict__:
                self._take(self.spec.parts(self.config))
        return self.__dict__[name]

    def _take(self, parts: LinkerParts) -> None:
        """Hold what ``parts`` has of the linker's parts (an unpickled copy's, or those a deferred build made)."""
        for part in Linker._BUILT_ON_USE:
            setattr(self, part, getattr(parts, part))

    def link(self, mention: str | Mention) -> LinkResult:
        return self.link_many([mention])[0]

    def link_many(self, mentions: Iterable[str | Mention]) -> list[LinkResult]:
        """Link a batch; each distinct normalized key is decided once."""
        with self._lock:
            return self._link_mentions(mentions)

    def annotate(self, text: str, config: AnnotatorConfig | None = None) -> list[Annotation]:
        """Every concept mention of running ``text``, linked and marked negated or uncertain
        (:mod:`medlink.linking.annotation`)."""
        return self.annotate_many([text], config)[0]

    def annotate_many(self, texts: Sequence[str], config: AnnotatorConfig | None = None) -> list[list[Annotation]]:
        """``config`` ``None``: the defaults, with the packaged span tagger and corpus lexicon when ``medlink[tagger]``
        is installed. A config that names no branches keeps to the linker's own (``LinkerConfig.branches``): spans
        the lexicon teaches are not linked, so the linker's scope is applied to them here."""
        if config is None:
            with self._lock:
                if self._default_annotation is None:
                    self._default_annotation = packaged_span_sources(AnnotatorConfig())
                config = self._default_annotation
        if config.branches is None and self.config.branches:
            config = replace(config, branches=tuple(self.config.branches))
        return annotate_many(self, texts, config)

    @property
    def config(self) -> LinkerConfig:
        """The settings, fixed for the linker's life (its caches hold results decided under them)."""
        return self._config

    def with_config(self, config: LinkerConfig) -> Linker:
        """A linker with other settings over the same terminology, sieves and encoder (nothing is reloaded), which
        it links one batch at a time with this one. A ``config`` that sets no nil threshold keeps the one the index
        was calibrated with, as ``Linker.load`` does."""
        if self._deferred is not None and self.spec is not None:  # its index is not built yet: nor is the copy's
            return Linker.load(self.spec, config=config, progress=self._progress)
        if config.nil_threshold is None and self.calibrated_nil_threshold is not None:
            config = replace(config, nil_threshold=self.calibrated_nil_threshold)
        other = Linker(
            self.terminology, self.sieves, config, self.counter, self.term_test, self.reranker, self.form_test
        )
        other.spec, other.calibrated_nil_threshold = self.spec, self.calibrated_nil_threshold
        other._lock = self._lock  # the sieves (encoder, index) are shared: so is the lock that keeps them one at a time
        return other

    def _link_mentions(self, mentions: Iterable[str | Mention]) -> list[LinkResult]:
        # A mention without a document always gets the same result: a repeat costs one lookup by its text.
        mentions = list(mentions)
        results: list[LinkResult | None] = [self._by_text.get(m) if type(m) is str else None for m in mentions]
        missing = [i for i, result in enumerate(results) if result is None]
        if missing:
            decided = self._link_uncached([mentions[i] for i in missing])
            for i, result in zip(missing, decided, strict=True):
                results[i] = result
                if type(mentions[i]) is str:
                    self._remember(cast(str, mentions[i]), result, self._by_text)
        return results  # type: ignore[return-value]  # every slot is filled above

    def _link_uncached(self, mentions: list[str | Mention]) -> list[LinkResult]:
        originals = [mention_text(mention) for mention in mentions]
        limit, declares_nil = self.config.max_mention_chars, self.config.declares_nil
        refused = {i: said for i, text in enumerate(originals) if (said := refusal(text, limit, declares_nil))}
        texts: dict[int, str] = {}  # position -> the text searched for it
        for i, (mention, original) in enumerate(zip(mentions, originals, strict=True)):
            if i in refused:
                continue
            document = mention.document if isinstance(mention, Mention) else None
            if document is not None and self.config.max_document_chars:
                document = document[: self.config.max_document_chars]
            expand = self.config.expand_abbreviations
            texts[i] = self._rewriter.expanded(original, document) if expand else original
        spelled, named = self._rewriter.other_readings(texts)
        # One batch: the other spellings share the encoder calls.
        searched = [*texts.values(), *(other for other, _ in spelled.values()), *(name for name, _ in named.values())]
        results = iter(self._link_texts(searched, split=self.config.split_composites))
        linked = {i: next(results) for i in texts}
        spelled_linked = {i: next(results) for i in spelled}
        named_linked = {i: next(results) for i in named}
        out = []
        for i, original in enumerate(originals):
            if i in refused:
                cause, why = refused[i]
                out.append(LinkResult(original, (), Stage.NIL, reason=why, nil_cause=cause))
                continue
            respelled = (spelled[i], spelled_linked[i]) if i in spelled else None
            named_as = (named[i], named_linked[i]) if i in named else None
            text, result, notes = best_reading(texts[i], linked[i], respelled, named_as)
            if texts[i] != original:
                notes.insert(0, f"abbreviation expanded to {texts[i]!r}")
            result = self._prefer_written(prefer_literal(result, text, self.terminology), text)
            if isinstance(mention, Mention) and mention.entity_type:
                result = self._prefer_type(result, mention.entity_type)
            if notes:
                result = replace(result, reason="; ".join([*notes, result.reason]))
            out.append(result if result.mention == original else replace(result, mention=original))
        return out

    def _prefer_type(self, result: LinkResult, entity_type: str) -> LinkResult:
        """A name several concepts share, resolved by the mention's type when MeSH branches know it."""
        key = entity_type.casefold()
        if key not in self._type_scopes:
            self._type_scopes[key] = type_scope(self.terminology, key)
        scope = self._type_scopes[key]
        return result if scope is None else scope.prefer(result, f"the mention is a {entity_type}")

    def _prefer_written(self, result: LinkResult, text: str) -> LinkResult:
        chosen = prefer_written_name(result, text, self.terminology)
        if chosen is result or not self.config.branches:
            return chosen
        kept = self._in_scope([chosen])[0]
        return kept if kept is not None and kept.concepts == chosen.concepts else result

    @property
    def _rewriter(self) -> MentionRewriter:
        # Built on first use: the shorthand file is read then, and an unpickled linker has its terminology only then.
        if self._rewriter_built is None:
            shorthand = shorthand_lexicon(self.config.shorthand_file) if self.config.shorthand else None
            self._rewriter_built = MentionRewriter(
                self.terminology, shorthand, self.config.respell, self._matches_exactly
            )
        return self._rewriter_built

    def _matches_exactly(self, text: str) -> bool:
        """Whether an exact sieve links ``text``: a terminology name, an added synonym or an annotated training
        mention ("nephropathy" is no MEDIC name, yet BC5CDR's annotators link it to Kidney Diseases)."""
        key = self.terminology.normalizer(text)
        return any(isinstance(sieve, ExactSieve) and sieve.link(text, key) is not None for sieve in self.sieves)

    def _link_texts(self, texts: list[str], split: bool) -> list[LinkResult]:
        # Each distinct text is normalized once: in a stream of repeats, normalizing was the largest cost.
        key_of = {text: self.terminology.normalizer(text) for text in dict.fromkeys(texts)}
        keys = [key_of[text] for text in texts]
        # Taken from the cache first: deciding the rest may fill the cache and clear it.
        known = {key: self._cache[key] for key in keys if key in self._cache}
        undecided: dict[str, str] = {}
        for text, key in zip(texts, keys, strict=True):
            if key not in known and key not in undecided:
                undecided[key] = text
        known.update(self._decide_all(undecided, split))
        return [known[key] for key in keys]

    def _decide_all(self, undecided: dict[str, str], split: bool) -> dict[str, LinkResult]:
        decided: dict[str, LinkResult] = {}
        pending = list(undecided.items())
        for key, text in pending:
            if (early := unsearched(text, key, self.config, self.terminology)) is not None:
                decided[key] = early
        pending = [(key, text) for key, text in pending if key not in decided]
        if split:
            link_parts = functools.partial(self._link_texts, split=False)
            most = self.config.max_composite_parts
            composites = linked_composites(pending, self.terminology, self._rewriter.is_name, most, link_parts)
            decided.update(composites)
            pending = [(key, text) for key, text in pending if key not in composites]
        step = max(1, self.config.batch_size)
        for start in range(0, len(pending), step):
            batch = self._through_sieves(pending[start : start + step], decided)
            if batch and self._deferred is not None:  # what exact match left waits for the index to be built
                self._use(self._deferred())
                batch = self._through_sieves(batch, decided)
            for key, text in batch:
                decided[key] = not_found(text, [sieve.name for sieve in self.sieves], self.config.branches)
        for key, result in decided.items():
            self._remember(key, result, self._cache)
        return decided

    def _through_sieves(self, batch: list[tuple[str, str]], decided: dict[str, LinkResult]) -> list[tuple[str, str]]:
        """Run ``batch`` (key, text) through the sieves in order, putting each decision in ``decided``; returns
        what no sieve decided."""
        for sieve in self.sieves:
            if not batch:
                break
            outcomes = sieve.link_batch([(text, key) for key, text in batch])
            if self.reranker is not None and self.config.rerank:
                outcomes = reranked(outcomes, self.reranker, self.terminology.concept_preferred_name)
            outcomes = self._in_scope(outcomes)
            remaining = []
            found: dict[str, LinkResult] = {}
            for (key, text), outcome in zip(batch, outcomes, strict=True):
                if outcome is None:
                    remaining.append((key, text))
                else:
                    found[key] = finish(outcome, key, self.terminology, self.config)
            tested = judge_forms(judge_terms(found, self.term_test, self.config), self.form_test, self.config)
            decided.update(claim_counted(tested, self.counter, self.terminology, self.config))
            batch = remaining
        return batch

    def _use(self, parts: LinkerParts) -> None:
        """Take the parts a deferred build made (the sieves over the index, its calibrated settings); what was
        decided before is kept: exact decisions do not depend on them."""
        self._deferred = None
        self._take(parts)
        self._config = parts.config
        self._scope, self._type_scopes, self._rewriter_built = None, {}, None

    def _in_scope(self, outcomes: list[LinkResult | None]) -> list[LinkResult | None]:
        if not self.config.branches:
            return outcomes
        if self._scope is None:  # built on first use: its terminology may be one an unpickled linker loads then
            self._scope = BranchScope(self.terminology, self.config.branches)
        return self._scope.restrict_outcomes(outcomes)

    def clear_cache(self) -> None:
        """Forget every decided mention (results are cached by normalized text and by mention text)."""
        self._cache.clear()
        self._by_text.clear()

    def _remember(self, key: str, result: LinkResult, cache: dict[str, LinkResult]) -> None:
        if self.config.cache_size <= 0 or len(key) > LONGEST_CACHED_KEY:
            return
        if len(cache) >= self.config.cache_size:
            cache.clear()  # a simple bound; a full cache means the stream has little repetition anyway
        cache[key] = result
