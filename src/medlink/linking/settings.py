"""What a :class:`~medlink.linking.linker.Linker` is made of: its settings (:class:`LinkerConfig`), the roles of its
parts (sieves, term test, reranker, concept counter) as small protocols, and :class:`LinkerParts`, the assembled
whole that the pipeline builds and a linker wraps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from medlink.linking.results import LinkResult, Stage
from medlink.terminology import Terminology


class Sieve(Protocol):
    """One linking stage: for each ``(text, normalized key)`` a result, or ``None`` to pass it on."""

    stage: Stage
    name: str

    def link_batch(self, items: Sequence[tuple[str, str]]) -> list[LinkResult | None]: ...


class TermTest(Protocol):
    """Says how much each retrieved mention looks like a term at all (``linking/mentions/term_model.py``); below ``cut``
    it is nil."""

    @property
    def cut(self) -> float: ...

    def decisions(self, texts: Sequence[str], scores: Sequence[float]) -> Sequence[float]: ...


class FormTest(Protocol):
    """Says whether a retrieved name agrees with the mention in form (``linking/mentions/form.py``): a decision and,
    for a low one, why; below ``cut`` the mention is nil."""

    @property
    def cut(self) -> float: ...

    def judge(self, result: LinkResult) -> tuple[float, str]: ...


class CandidateReranker(Protocol):
    """Reorders close retrieval decisions by reading the mention beside each candidate (``linking/rerank/``)."""

    def rerank(self, results: Sequence[LinkResult], preferred_name: Callable[[str], str]) -> list[LinkResult]: ...


class ConceptCounter(Protocol):
    """Predicts how many concepts each mention names (Liang et al.'s count head; 1 for most mentions); its
    largest count, ``most``, means "that many or more"."""

    @property
    def most(self) -> int: ...

    def predict_counts(self, texts: Sequence[str]) -> Sequence[int]: ...


RETRIEVAL = (Stage.DENSE, Stage.SPARSE, Stage.HYBRID)  # the stages whose candidates a count can claim


@dataclass(frozen=True)
class LinkerConfig:
    """Linker settings; the defaults work.

    cache_size: how many normalized keys keep their result; mention streams repeat a lot, so the cache is where
        most of the throughput comes from. 0 disables it.
    nil_threshold: a dense or sparse decision scoring below it becomes nil, and so does text that is not a term
        (function words, control characters: linking/mentions/non_terms.py). ``medlink calibrate`` chooses it from
        labelled data; indexes built with training data and the embedded default carry one, which a linker over them
        uses while this is ``None``. ``None`` on a bare linker, or 0, never declares nil once a candidate exists.
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
        (linking/mentions/numbers.py); ``None`` never does.
    rerank: let the linker's reranker (a cross-encoder, when it has one) reorder close retrieval decisions.
    several_above: when the count head predicts its largest count ("3 or more") for a reranked decision, claim
        further candidates whose fused score exceeds this (Liang et al.'s θ rule, eq. 14).
    branches: link only to concepts under these tree-number prefixes (MeSH "C", "F03"; linking/mentions/branches.py): a
        sieve whose decision has no concept there passes the mention on, with its best in-scope candidate if any.
    shorthand: also search a mention with its clinical shorthand spelled out ("T2DM", "HTN", "breast ca";
        linking/mentions/shorthand.py) and keep that result when it links better than the mention as written.
    shorthand_file: a lexicon of your own (same format as medlink's) whose entries join and override medlink's.
    max_mention_chars: a longer mention is nil, with its reason, before any work is spent on it (the longest MeSH
        descriptor name has 250 characters; one hostile 1.5 MB mention would otherwise split into 200,000
        composite parts and encode each); 0: no limit.
    max_composite_parts: a composite mention that splits into more parts is linked as one (a real composite
        has a handful: "breast and ovarian cancer", a drug combination).
    max_document_chars: only the first this many characters of a mention's document are read for the short forms
        it defines (an abstract has about 2,000; a whole paper fits).
    form_test: let the linker's form test (an index calibrated with one, and the embedded default, carry it) make a
        retrieved look-alike nil: a mention with a word no name of the terminology has that the found name does
        not account for, or a drug-name affix whose stem differs ("quextatinib" → Lapatinib;
        linking/mentions/form.py).
    respell: also search a mention spelled the American way ("oedema" → "edema", "sulphate" → "sulfate") and keep
        that when it links better; and a drug salt that is no name ("metformin hydrochloride") as its parent drug,
        an anion ("metrizoate") as its acid, a possessive eponym ("Parkinson's") as the disease it names, when that
        is a name (linking/mentions/respelling.py).
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
    max_mention_chars: int = 1000
    max_composite_parts: int = 8
    max_document_chars: int = 100_000
    form_test: bool = True

    @property
    def declares_nil(self) -> bool:
        return self.nil_threshold is not None and self.nil_threshold > 0


@dataclass(frozen=True)
class LinkerParts:
    """Everything a linker links with, as the pipeline assembles it (``medlink.linking.pipeline``): the terminology,
    the sieves in order, the settings, and the optional concept counter, term test and reranker."""

    terminology: Terminology
    sieves: tuple[Sieve, ...]
    config: LinkerConfig
    counter: ConceptCounter | None = None
    term_test: TermTest | None = None
    reranker: CandidateReranker | None = None
    form_test: FormTest | None = None
    calibrated_nil_threshold: float | None = None  # the index's own, kept when the settings are changed
