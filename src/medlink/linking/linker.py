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

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, cast

from medlink.linking.abbreviations import expand_abbreviations
from medlink.linking.branches import BranchScope
from medlink.linking.composites import split_composite
from medlink.linking.exact import ExactSieve, prefer_literal, prefer_written_name
from medlink.linking.non_terms import control_characters, not_a_term
from medlink.linking.numbers import agree_on_numbers
from medlink.linking.recipe import LinkerRecipe
from medlink.linking.respelling import (
    acid_name,
    eponym_names,
    says_the_same_cause,
    standard_spelling,
    without_cause,
    without_isotope_label,
    without_salt,
)
from medlink.linking.results import LinkResult, Mention, Stage
from medlink.linking.shorthand import links_better, shorthand_lexicon
from medlink.terminology import Terminology


class Sieve(Protocol):
    """One linking stage: for each ``(text, normalized key)`` a result, or ``None`` to pass it on."""

    stage: Stage
    name: str

    def link_batch(self, items: Sequence[tuple[str, str]]) -> list[LinkResult | None]: ...


class TermTest(Protocol):
    """Says how much each retrieved mention looks like a term at all (``linking/term_model.py``); below ``cut``
    it is nil."""

    @property
    def cut(self) -> float: ...

    def decisions(self, texts: Sequence[str], scores: Sequence[float]) -> Sequence[float]: ...


class CandidateReranker(Protocol):
    """Reorders close retrieval decisions by reading the mention beside each candidate (``linking/rerank.py``)."""

    def rerank(self, results: Sequence[LinkResult], preferred_name: Callable[[str], str]) -> list[LinkResult]: ...


class ConceptCounter(Protocol):
    """Predicts how many concepts each mention names (Liang et al.'s count head; 1 for most mentions); its
    largest count, ``most``, means "that many or more"."""

    @property
    def most(self) -> int: ...

    def predict_counts(self, texts: Sequence[str]) -> Sequence[int]: ...


_RETRIEVAL = (Stage.DENSE, Stage.SPARSE, Stage.HYBRID)  # the stages whose candidates a count can claim


@dataclass(frozen=True)
class LinkerConfig:
    """Linker settings; the defaults work.

    cache_size: how many normalized keys keep their result; mention streams repeat a lot, so the cache is where
        most of the throughput comes from. 0 disables it.
    nil_threshold: a dense or sparse decision scoring below it becomes nil, and so does text that is not a term
        (function words, control characters: linking/non_terms.py). ``medlink calibrate`` chooses it from labelled
        data; indexes built with training data and the embedded default carry one, which a linker over them uses
        while this is ``None``. ``None`` on a bare linker, or 0, never declares nil once a candidate exists.
    several_within: claim every candidate whose score is within this margin of the best (a mention naming several
        concepts); ``None`` claims one concept (or all that share the matched name).
    batch_size: mentions handed to the sieves at a time; 4,096 rather than 1,024 lifts end-to-end speed from
        about 81 % to about 90 % of the encoder's own (fewer, fuller encoder and FAISS calls;
        benchmarks/linker_batch_size.py).
    expand_abbreviations: use the document of a :class:`Mention` to expand short forms (Schwartz & Hearst, and
        terminology names for short forms whose letters spell nothing of them).
    split_composites: link composite mentions part by part.
    count_head: let the linker's concept counter (the encoder's count head, when it has one) decide how many of a
        dense or sparse decision's candidates a mention claims.
    number_margin: a dense or sparse decision whose best name states other numbers than the mention ("SCA11" for
        "SCA1") takes the best candidate stating the same numbers when it scores within this margin of the best
        (linking/numbers.py); ``None`` never does.
    rerank: let the linker's reranker (a cross-encoder, when it has one) reorder close retrieval decisions.
    several_above: when the count head predicts its largest count ("3 or more") for a reranked decision, claim
        further candidates whose fused score exceeds this (Liang et al.'s θ rule, eq. 14).
    branches: link only to concepts under these tree-number prefixes (MeSH "C", "F03"; linking/branches.py): a
        sieve whose decision has no concept there passes the mention on, with its best in-scope candidate if any.
    shorthand: also search a mention with its clinical shorthand spelled out ("T2DM", "HTN", "breast ca";
        linking/shorthand.py) and keep that result when it links better than the mention as written.
    shorthand_file: a lexicon of your own (same format as medlink's) whose entries join and override medlink's.
    respell: also search a mention spelled the American way ("oedema" → "edema", "sulphate" → "sulfate") and keep
        that when it links better; and a drug salt that is no name ("metformin hydrochloride") as its parent drug,
        an anion ("metrizoate") as its acid, a possessive eponym ("Parkinson's") as the disease it names, when that
        is a name (linking/respelling.py).
    """

    cache_size: int = 200_000
    nil_threshold: float | None = None
    several_within: float | None = None
    batch_size: int = 4096
    expand_abbreviations: bool = True
    split_composites: bool = True
    count_head: bool = True
    number_margin: float | None = 0.15
    rerank: bool = True
    several_above: float = 0.9
    branches: tuple[str, ...] = ()
    shorthand: bool = True
    shorthand_file: Path | None = None
    respell: bool = True

    @property
    def declares_nil(self) -> bool:
        return self.nil_threshold is not None and self.nil_threshold > 0


class Linker:
    """Links mentions to the concepts of one terminology.

    Thread-safe (one batch is linked at a time; the encoder uses every core for it). A linker made by
    :meth:`load` pickles as its :class:`LinkerRecipe` and settings, and the copy rebuilds its terminology, index
    and encoder on first use, so it can be handed to process pools, spaCy's ``n_process`` and Spark workers.
    """

    _BUILT_ON_USE = ("terminology", "sieves", "counter", "term_test", "reranker")  # what an unpickled linker rebuilds

    def __init__(
        self,
        terminology: Terminology,
        sieves: Sequence[Sieve] | None = None,
        config: LinkerConfig | None = None,
        counter: ConceptCounter | None = None,
        term_test: TermTest | None = None,
        reranker: CandidateReranker | None = None,
    ) -> None:
        self.terminology = terminology
        self.sieves: tuple[Sieve, ...] = tuple(sieves) if sieves is not None else (ExactSieve(terminology),)
        self._config = config or LinkerConfig()
        self.counter = counter
        self.term_test = term_test
        self.reranker = reranker
        self.recipe: LinkerRecipe | None = None  # set by LinkerRecipe.build; what pickling carries
        self._cache: dict[str, LinkResult] = {}  # by normalized text, before abbreviations and literal preference
        self._by_text: dict[str, LinkResult] = {}  # final results of mentions given without a document
        self._scope: BranchScope | None = None  # of config.branches
        self._lock = threading.RLock()

    @classmethod
    def load(
        cls,
        index_dir: Path | str | None = None,
        *,
        terminology: Path | str | None = None,
        exact_only: bool = False,
        sieves: str | None = None,
        ef_search: int | None = None,
        ranker: Path | str | None = None,
        config: LinkerConfig | None = None,
        progress: bool = False,
    ) -> Linker:
        """A linker over a saved index, or with no arguments the embedded default (MeSH descriptors shipped with
        medlink, exact match then dense retrieval; its index is built and cached on first use, about a minute and
        a half). ``exact_only`` links by exact normalized match alone (``terminology`` or the embedded MeSH); see
        :class:`LinkerRecipe` for the other arguments; ``ranker`` links with a set ranker from ``medlink
        train-ranker`` over ``terminology``. ``config`` replaces the settings the index was calibrated with."""
        recipe = LinkerRecipe(Path(index_dir) if index_dir else None, Path(terminology) if terminology else None,
                              exact_only, sieves, ef_search, Path(ranker) if ranker else None)  # fmt: skip
        return recipe.build(config, progress)

    @classmethod
    def from_path(cls, terminology_dir: Path | str, config: LinkerConfig | None = None) -> Linker:
        """An exact-match linker over a compiled terminology (the same as ``load(terminology=…, exact_only=True)``)."""
        return cls.load(terminology=terminology_dir, exact_only=True, config=config)

    # --- pickling: the recipe travels, the heavy parts are rebuilt where the copy is used --------------------

    def __getstate__(self) -> dict[str, Any]:
        if self.recipe is None:
            raise TypeError("this Linker was assembled from parts and cannot be pickled; make it with Linker.load() "
                            "(an index folder, a terminology with exact_only, or the embedded default)")  # fmt: skip
        return {"recipe": self.recipe, "config": self.config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.recipe = state["recipe"]
        self._config = state["config"]
        self._cache, self._by_text = {}, {}
        self._scope = None
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set yet: an unpickled linker builds its parts on first use.
        if name not in Linker._BUILT_ON_USE or "recipe" not in self.__dict__ or self.recipe is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        with self._lock:
            if name not in self.__dict__:
                built = self.recipe.build(self.config)
                for part in Linker._BUILT_ON_USE:
                    setattr(self, part, getattr(built, part))
        return self.__dict__[name]

    def link(self, mention: str | Mention) -> LinkResult:
        return self.link_many([mention])[0]

    def link_many(self, mentions: Iterable[str | Mention]) -> list[LinkResult]:
        """Link a batch; each distinct normalized key is decided once."""
        with self._lock:
            return self._link_mentions(mentions)

    @property
    def config(self) -> LinkerConfig:
        """The settings, fixed for the linker's life (its caches hold results decided under them)."""
        return self._config

    def with_config(self, config: LinkerConfig) -> Linker:
        """A linker with other settings over the same terminology, sieves and encoder (nothing is reloaded)."""
        other = Linker(self.terminology, self.sieves, config, self.counter, self.term_test, self.reranker)
        other.recipe = self.recipe
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
        originals = [_text_of(mention) for mention in mentions]
        refused = {i: why for i, original in enumerate(originals)
                   if self.config.declares_nil and (why := control_characters(original))}  # fmt: skip
        texts: dict[int, str] = {}  # position -> the text searched for it
        for i, (mention, original) in enumerate(zip(mentions, originals, strict=True)):
            if i in refused:
                continue
            document = mention.document if isinstance(mention, Mention) else None
            expand = self.config.expand_abbreviations
            texts[i] = self._expanded(original, document) if expand else original
        spelled: dict[int, tuple[str, str]] = {}  # position -> (the text spelled otherwise, how), when it differs
        for i, text in texts.items():
            other, how = self._respelled(text)
            if other != text:
                spelled[i] = (other, how)
        named: dict[int, tuple[str, str]] = {}  # position -> (a name the mention stands for, how), when one is
        if self.config.respell:
            for i, text in texts.items():
                if (found := self._named_form(spelled[i][0] if i in spelled else text)) is not None:
                    named[i] = found
        # One batch: the other spellings share the encoder calls.
        searched = [*texts.values(), *(other for other, _ in spelled.values()), *(name for name, _ in named.values())]
        results = iter(self._link_texts(searched, split=self.config.split_composites))
        linked = {i: next(results) for i in texts}
        spelled_linked = {i: next(results) for i in spelled}
        named_linked = {i: next(results) for i in named}
        out = []
        for i, original in enumerate(originals):
            if i in refused:
                out.append(LinkResult(original, (), Stage.NIL, reason=refused[i]))
                continue
            text, result = texts[i], linked[i]
            notes = [f"abbreviation expanded to {text!r}"] if text != original else []
            if i in spelled and links_better(spelled_linked[i], result):
                (text, how), result = spelled[i], spelled_linked[i]
                notes.append(f"{how} as {text!r}")
            if i in named and result.stage is not Stage.EXACT and named_linked[i].stage is Stage.EXACT \
                    and not says_the_same_cause(text, result.matched_name or ""):
                (text, how), result = named[i], named_linked[i]
                notes.append(f"{how} {text!r}")
            result = self._prefer_written(prefer_literal(result, text), text)
            if notes:
                result = replace(result, reason="; ".join([*notes, result.reason]))
            out.append(result if result.mention == original else replace(result, mention=original))
        return out

    def _prefer_written(self, result: LinkResult, text: str) -> LinkResult:
        chosen = prefer_written_name(result, text, self.terminology)
        if chosen is result or not self.config.branches:
            return chosen
        kept = self._in_scope([chosen])[0]
        return kept if kept is not None and kept.concepts == chosen.concepts else result

    def _respelled(self, text: str) -> tuple[str, str]:
        """``text`` with its clinical shorthand spelled out and British spellings made American, as configured, and
        how it was changed."""
        spelled = shorthand_lexicon(self.config.shorthand_file).expand(text) if self.config.shorthand else text
        how = "clinical shorthand spelled out" if spelled != text else "respelled"
        return (standard_spelling(spelled) if self.config.respell else spelled), how

    def _named_form(self, written: str) -> tuple[str, str] | None:
        """The terminology name a salt ("metformin hydrochloride"), a labelled compound ("[3H]-L-arginine"), an anion
        ("metrizoate") or a possessive eponym ("Parkinson's") stands for, and how it was found; ``None`` when there
        is none. Only names: no encoder call is spent on a guess."""
        if (bare := without_salt(written)) != written and self._is_name(bare):
            return bare, "salt searched as its parent drug"
        if (bare := without_isotope_label(written)) != written.strip() and self._is_name(bare):
            return bare, "isotope label dropped:"
        if (acid := acid_name(written)) != written.strip() and self._is_name(acid):
            return acid, "anion searched as its acid"
        for name in eponym_names(written):
            if self._is_name(name):
                return name, "eponym searched as"
        if (condition := without_cause(written)) != written.strip() and self._matches_exactly(condition):
            return condition, "cause dropped:"
        return None

    def _expanded(self, original: str, document: str | None) -> str:
        """``original`` with the short forms ``document`` defines spelled out, unless a short form inside a longer
        name would turn it into a string that is no name: "HIV Infections" is a MeSH name, "Human Immunodeficiency
        Virus Infections" is not, and searched it finds the virus. A mention that is only a short form ("OMD") is
        always spelled out: the document's definition beats whatever else those letters name."""
        expanded = expand_abbreviations(original, document, self._is_name)
        inside_name = expanded != original and len(original.split()) > 1
        if inside_name and not self._is_name(expanded) and self._is_name(original):
            return original
        return expanded

    def _is_name(self, text: str) -> bool:
        """Whether ``text`` normalizes to a terminology name (guides short forms, salts, eponyms and composites)."""
        return self.terminology.has_normalized(self.terminology.normalizer(text))

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
            if not key:
                decided[key] = LinkResult(text, (), Stage.EMPTY, reason="the mention has no text to link")
            elif self.config.declares_nil and (why := not_a_term(key)) and not self.terminology.has_normalized(key):
                decided[key] = LinkResult(text, (), Stage.NIL, reason=why)
        pending = [(key, text) for key, text in pending if key not in decided]
        if split:
            composites = self._link_composites(pending)
            decided.update(composites)
            pending = [(key, text) for key, text in pending if key not in composites]
        step = max(1, self.config.batch_size)
        for start in range(0, len(pending), step):
            batch = pending[start : start + step]
            for sieve in self.sieves:
                if not batch:
                    break
                outcomes = self._in_scope(self._rerank(sieve.link_batch([(text, key) for key, text in batch])))
                remaining = []
                found: dict[str, LinkResult] = {}
                for (key, text), outcome in zip(batch, outcomes, strict=True):
                    if outcome is None:
                        remaining.append((key, text))
                    else:
                        found[key] = self._finish(outcome, key)
                decided.update(self._claim_counted(self._test_terms(found)))
                batch = remaining
            tried = ", ".join(sieve.name for sieve in self.sieves)
            scope = f" in branches {','.join(self.config.branches)}" if self.config.branches else ""
            for key, text in batch:
                decided[key] = LinkResult(text, (), Stage.NIL, reason=f"no concept{scope} found by: {tried}")
        for key, result in decided.items():
            self._remember(key, result, self._cache)
        return decided

    def _link_composites(self, pending: list[tuple[str, str]]) -> dict[str, LinkResult]:
        """Results for the pending mentions that split into parts which all link; parts are linked in one batch."""
        text_of = dict(pending)
        splits = {key: parts for key, text in pending if not self.terminology.has_normalized(key)
                  and (parts := split_composite(text, self._is_name))}  # fmt: skip
        if not splits:
            return {}
        part_texts = list(dict.fromkeys(part for parts in splits.values() for part in parts))
        linked = dict(zip(part_texts, self._link_texts(part_texts, split=False), strict=True))
        results = {}
        for key, parts in splits.items():
            part_results = tuple(replace(linked[part], mention=part) for part in parts)
            if any(not result.concepts for result in part_results):
                continue  # a part that links to nothing: treat the mention as one name instead
            concepts = tuple(dict.fromkeys(result.concepts[0] for result in part_results))
            results[key] = LinkResult(
                mention=text_of[key], concepts=concepts, stage=Stage.COMPOSITE,
                score=min(result.score or 0.0 for result in part_results),
                preferred_names=tuple(self.terminology.concept_preferred_name(c) for c in concepts),
                several=True, parts=part_results,
                reason=f"composite mention split into {len(parts)} parts: " + "; ".join(parts),
            )  # fmt: skip
        return results

    def _rerank(self, outcomes: list[LinkResult | None]) -> list[LinkResult | None]:
        if self.reranker is None or not self.config.rerank:
            return outcomes
        decided = [(i, outcome) for i, outcome in enumerate(outcomes) if outcome is not None]
        reranked = self.reranker.rerank([outcome for _, outcome in decided], self.terminology.concept_preferred_name)
        for (i, _), result in zip(decided, reranked, strict=True):
            outcomes[i] = result
        return outcomes

    def _in_scope(self, outcomes: list[LinkResult | None]) -> list[LinkResult | None]:
        """Outcomes restricted to the configured branches; one with nothing there passes the mention on."""
        if not self.config.branches:
            return outcomes
        if self._scope is None:  # built on first use: its terminology may be one an unpickled linker loads then
            self._scope = BranchScope(self.terminology, self.config.branches)
        scope = self._scope
        restricted: list[LinkResult | None] = []
        for outcome in outcomes:
            kept = scope.restrict(outcome) if outcome is not None else None
            restricted.append(None if kept is not None and not kept.concepts else kept)
        return restricted

    def _finish(self, result: LinkResult, key: str) -> LinkResult:
        if self.config.number_margin is not None and result.stage in _RETRIEVAL:
            result = agree_on_numbers(result, key, self.terminology, self.config.number_margin)
        threshold = self.config.nil_threshold or 0.0
        if self.config.declares_nil and result.stage is not Stage.EXACT and (result.score or 0.0) < threshold:
            return _as_nil(result, f"best candidate {result.matched_name!r} scored {result.score:.3f}, below the "
                                   f"nil threshold {threshold:.3f}")  # fmt: skip
        margin = self.config.several_within
        if margin is not None and result.candidates and result.score is not None:
            close = [c.concept_id for c in result.candidates if c.score >= result.score - margin]
            return self._claim(result, close, f"{{}} concepts within {margin} of the best")
        return result

    def _test_terms(self, results: dict[str, LinkResult]) -> dict[str, LinkResult]:
        """Retrieval decisions the term test finds unlike any term become nil (only while nil is declared)."""
        if self.term_test is None or not self.config.declares_nil:
            return results
        retrieved = [key for key, result in results.items() if result.stage in _RETRIEVAL and result.score is not None]
        if not retrieved:
            return results
        texts = [results[key].mention for key in retrieved]
        decisions = self.term_test.decisions(texts, [results[key].score or 0.0 for key in retrieved])
        tested = dict(results)
        cut = self.term_test.cut
        for key, decision in zip(retrieved, decisions, strict=True):
            if decision < cut:
                result = results[key]
                tested[key] = _as_nil(result, f"best candidate {result.matched_name!r} scored {result.score:.3f}, but "
                                              f"the mention does not read as a term (term model {decision:.2f}, "
                                              f"below {cut:.2f})")  # fmt: skip
        return tested

    def _claim_counted(self, results: dict[str, LinkResult]) -> dict[str, LinkResult]:
        """Retrieval decisions whose mention the counter says names n > 1 concepts claim their n best candidates."""
        if self.counter is None or not self.config.count_head:
            return results
        retrieved = [key for key, result in results.items() if result.stage in _RETRIEVAL and result.candidates]
        if not retrieved:
            return results
        counts = self.counter.predict_counts([results[key].mention for key in retrieved])
        claimed = dict(results)
        for key, count in zip(retrieved, counts, strict=True):
            candidates = results[key].candidates
            best = [c.concept_id for c in candidates[:count]]
            why = f"the count head predicts {count} concepts"
            if count >= self.counter.most:  # "that many or more": the θ rule claims every further confident one
                more = [c.concept_id for c in candidates[count:]
                        if c.rerank_score is not None and c.rerank_score > self.config.several_above]  # fmt: skip
                if more:
                    best += more
                    why += f" or more ({len(more)} more with a fused score above {self.config.several_above})"
            claimed[key] = self._claim(results[key], best, why, limit=len(best))
        return claimed

    def _claim(self, result: LinkResult, candidates: Sequence[str], why: str, limit: int | None = None) -> LinkResult:
        """``result`` also claiming ``candidates`` (after its own concepts, at most ``limit`` in all), or unchanged
        when that adds none. ``why`` joins the reason; ``{}`` in it becomes the number of concepts claimed."""
        claimed = tuple(dict.fromkeys([*result.concepts, *candidates]))[:limit]
        if len(claimed) <= len(result.concepts):
            return result
        names = tuple(self.terminology.concept_preferred_name(c) for c in claimed)
        return replace(result, concepts=claimed, preferred_names=names, several=True,
                       reason=f"{result.reason}; {why.format(len(claimed))}")  # fmt: skip

    def clear_cache(self) -> None:
        """Forget every decided mention (results are cached by normalized text and by mention text)."""
        self._cache.clear()
        self._by_text.clear()

    def _remember(self, key: str, result: LinkResult, cache: dict[str, LinkResult]) -> None:
        if self.config.cache_size <= 0:
            return
        if len(cache) >= self.config.cache_size:
            cache.clear()  # a simple bound; a full cache means the stream has little repetition anyway
        cache[key] = result


def _as_nil(result: LinkResult, reason: str) -> LinkResult:
    """``result`` turned nil, its candidates kept so the reason can be checked."""
    return replace(result, concepts=(), preferred_names=(), stage=Stage.NIL, several=False, reason=reason)


def _text_of(mention: str | Mention) -> str:
    if isinstance(mention, Mention):
        return mention.text
    if not isinstance(mention, str):
        raise TypeError(f"a mention must be text or a Mention, got {type(mention).__name__}: {mention!r}")
    return mention
