"""What a :class:`~medlink.linking.linker.Linker` is made of: its settings (:class:`LinkerConfig`), the roles of its
parts (sieves, term test, reranker, concept counter) as small protocols, and :class:`LinkerParts`, the assembled
whole that the pipeline builds and a linker wraps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from medlink.linking.results import LinkResult, Stage
from medlink.options import setting
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
    """Linker settings; the defaults work. Each field's help says what it does (``medlink link --print-config``
    lists them all); the ones marked ``research`` are ablations and tuning knobs, left out of the everyday
    ``--help`` and set with ``--config FILE.toml``. Why some defaults are what they are:

    cache_size: mention streams repeat a lot, so the cache is where most of the throughput comes from.
    nil_threshold: ``medlink calibrate`` chooses it from labelled data; indexes built with training data and the
        embedded default carry one, which a linker over them uses while this is ``None``.
    batch_size: 4,096 rather than 1,024 lifts end-to-end speed from about 81 % to about 90 % of the encoder's own
        (fewer, fuller encoder and FAISS calls; benchmarks/linker_batch_size.py).
    max_mention_chars: the longest MeSH descriptor name has 250 characters; one hostile 1.5 MB mention would
        otherwise split into 200,000 composite parts and encode each.
    """

    cache_size: int = setting(
        200_000, "How many normalized mentions keep their result (0: no cache).", minimum=0, research=True
    )
    nil_threshold: float | None = setting(
        None,
        "Dense and sparse decisions scoring below this are nil, and so is text that is not a term (default: the "
        "index's calibrated one, if any; 0: never nil once a candidate exists).",
    )
    several_within: float | None = setting(
        None, "Claim every concept scoring within this margin of the best (multi-concept mentions)."
    )
    batch_size: int = setting(
        4096, "Mentions handed to the sieves at a time.", minimum=1, maximum=1_000_000, research=True
    )
    expand_abbreviations: bool = setting(
        True,
        "Expand short forms defined in a mention's document (Schwartz & Hearst, and terminology names for short "
        "forms whose letters spell nothing of them) before linking.",
        flag="--abbreviations",
        research=True,
    )
    split_composites: bool = setting(
        True, "Link composite mentions ('breast and ovarian cancer') part by part.", flag="--composites", research=True
    )
    count_head: bool = setting(
        True,
        "Let an encoder trained with a concept-count head decide how many concepts a mention claims (no effect on "
        "encoders without one).",
        research=True,
    )
    number_margin: float | None = setting(
        0.15,
        "A retrieved name stating other numbers than the mention ('SCA11' for 'SCA1') gives way to the best "
        "candidate stating the same numbers when it scores within this margin (in cosine) of the best; none: never.",
        minimum=0,
        research=True,
    )
    rerank: bool = setting(
        True,
        "Let the linker's reranker (the given --reranker, or the one shipped with the default) reorder close "
        "retrieval decisions.",
        research=True,
    )
    several_above: float = setting(
        0.9,
        "When the count head predicts its largest count for a reranked decision, claim further candidates whose "
        "fused score exceeds this (Liang et al.'s theta rule, eq. 14).",
        research=True,
    )
    branches: tuple[str, ...] = setting(
        (),
        "Link only to concepts under these tree-number prefixes (MeSH: C diseases, F03 mental disorders, D chemicals "
        "and drugs), or of these kinds (Disease = C,F03; Chemical, Drug = D; Anatomy, Organism, Procedure, "
        "Phenomenon); needs a terminology with tree numbers. A sieve whose decision has no concept there passes the "
        "mention on.",
        metavar="C,F03|KIND",
    )
    shorthand: bool = setting(
        True,
        "Also search a mention with its clinical shorthand spelled out ('T2DM', 'HTN', 'breast ca'; medlink's "
        "lexicon) and keep that when it links better.",
        research=True,
    )
    shorthand_file: Path | None = setting(
        None,
        "Your own shorthand, 'short<TAB>long' per line (resources/clinical-shorthand/shorthand.tsv shows the "
        "format); joins and overrides medlink's.",
        path={"exists": True, "dir_okay": False},
    )
    respell: bool = setting(
        True,
        "Also search a mention spelled the American way ('oedema' -> 'edema', 'sulphate' -> 'sulfate'); and, when "
        "that is a name, a salt as its parent drug ('metformin hydrochloride'), an anion as its acid, a labelled "
        "compound without its label, a possessive eponym as its disease ('Parkinson's').",
        research=True,
    )
    max_mention_chars: int = setting(
        1000, "A longer mention is nil, with the reason, before any work is spent on it (0: no limit).", minimum=0
    )
    max_composite_parts: int = setting(
        8,
        "A composite mention that splits into more parts is linked as one (a real composite has a handful).",
        minimum=1,
        research=True,
    )
    max_document_chars: int = setting(
        100_000,
        "Only the first this many characters of a mention's document are read for the short forms it defines.",
        minimum=0,
        research=True,
    )
    form_test: bool = setting(
        True,
        "Let the linker's form test (the embedded default's, or an index's calibrated one) make a retrieved "
        "look-alike nil: the mention has a word no name of the terminology has that the found name does not account "
        "for, or a drug-name stem that differs ('quextatinib' -> Lapatinib).",
        research=True,
    )

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
