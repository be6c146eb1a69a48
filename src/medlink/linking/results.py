"""What goes into a linker and what comes out: mentions, candidates and self-explaining results."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class Stage(StrEnum):
    """Which step decided a result. Later pipelines add dense and sparse sieves after ``exact``."""

    EXACT = "exact"
    DENSE = "dense"
    SPARSE = "sparse"
    HYBRID = "hybrid"  # dense and sparse candidates fused
    RANKED = "ranked"  # a learned ranker claimed the set of concepts above its threshold (linking/sets/set_ranker.py)
    COMPOSITE = "composite"  # split into parts, each linked on its own (see ``parts``)
    EMPTY = "empty"  # the mention had no text to link
    NIL = "nil"  # no stage found a concept, or the best score was below the nil threshold


class NilCause(StrEnum):
    """Why a result is nil, as data: ``LinkResult.reason`` says the same in words, with the figures."""

    THRESHOLD = "threshold"  # the best candidate scored below the nil threshold
    TERM_TEST = "term test"  # the mention does not read as a term (the index's term model)
    FORM_TEST = "form test"  # the found name is a look-alike of a term the terminology lacks (its form test)
    NOT_A_TERM = "not a term"  # a function word, a number, punctuation or binary data: no term at all
    TOO_LONG = "too long"  # more characters than LinkerConfig.max_mention_chars
    OUT_OF_SCOPE = "out of scope"  # nothing found in the branches asked for (an entity type, --branches)
    NO_CANDIDATE = "no candidate"  # no sieve found a concept


@dataclass(frozen=True)
class Mention:
    """A mention to link, optionally with the document it occurs in (used to expand abbreviations)."""

    text: str
    document: str | None = None
    start: int | None = None
    end: int | None = None
    entity_type: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"a mention must be text, got {type(self.text).__name__}: {self.text!r}")


@dataclass(frozen=True)
class Candidate:
    """A concept a stage considered, with the name that matched and its score; ``rerank_score`` is the fused
    score when the rerank stage read it (linking/rerank/reranker.py)."""

    concept_id: str
    name: str
    score: float
    rerank_score: float | None = None


@dataclass(frozen=True)
class LinkResult:
    """The decision for one mention.

    ``concepts`` lists the linked ids, best first; when several concepts share the matched name they are all
    listed (ambiguity is reported, not broken at random) and ``ambiguous`` is true. ``candidates`` holds what the
    deciding stage considered; ``reason`` says in words why this result, including why a mention is nil.
    """

    mention: str
    concepts: tuple[str, ...]
    stage: Stage
    score: float | None = None
    matched_name: str | None = None
    preferred_names: tuple[str, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    reason: str = ""
    strategy: str = ""  # which sieve of a stage decided, e.g. "D-T" or "OD-T"
    several: bool = False  # the concepts are all claimed (a multi-concept mention), not alternatives
    parts: tuple[LinkResult, ...] = ()  # the linked parts of a composite mention
    nil_cause: NilCause | None = None  # why a nil result is nil (None for every other stage)

    @property
    def concept_id(self) -> str | None:
        """The best concept, or ``None`` for nil and empty mentions."""
        return self.concepts[0] if self.concepts else None

    @property
    def ambiguous(self) -> bool:
        """Several concepts share the matched name and nothing tells them apart."""
        return len(self.concepts) > 1 and not self.several

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, in the order a reader wants: the decision first, then its explanation."""
        return {
            "mention": self.mention,
            "concepts": list(self.concepts),
            "score": self.score,
            "stage": self.stage.value,
            "strategy": self.strategy,
            "matched_name": self.matched_name,
            "preferred_names": list(self.preferred_names),
            "ambiguous": self.ambiguous,
            "several": self.several,
            "reason": self.reason,
            "nil_cause": self.nil_cause.value if self.nil_cause else None,
            "candidates": [_candidate_dict(candidate) for candidate in self.candidates],
            "parts": [part.to_dict() for part in self.parts],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinkResult:
        """The result :meth:`to_dict` wrote (from JSON output, a service response or a spaCy span)."""
        return cls(
            mention=data["mention"],
            concepts=tuple(data["concepts"]),
            stage=Stage(data["stage"]),
            score=data.get("score"),
            matched_name=data.get("matched_name"),
            preferred_names=tuple(data.get("preferred_names", ())),
            candidates=tuple(Candidate(**candidate) for candidate in data.get("candidates", ())),
            reason=data.get("reason", ""),
            strategy=data.get("strategy", ""),
            several=data.get("several", False),
            parts=tuple(cls.from_dict(part) for part in data.get("parts", ())),
            nil_cause=NilCause(data["nil_cause"]) if data.get("nil_cause") else None,
        )


def _candidate_dict(candidate: Candidate) -> dict[str, Any]:
    """A candidate as JSON; ``rerank_score`` only when the rerank stage read it."""
    data = asdict(candidate)
    if data["rerank_score"] is None:
        del data["rerank_score"]
    return data


def mention_text(mention: str | Mention) -> str:
    """The text of a mention given as text or as a :class:`Mention`; anything else is refused."""
    if isinstance(mention, Mention):
        return mention.text
    if not isinstance(mention, str):
        raise TypeError(f"a mention must be text or a Mention, got {type(mention).__name__}: {mention!r}")
    return mention
