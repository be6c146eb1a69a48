"""Dense sieves: nearest neighbours of the mention's vector among encoded names or training mentions.

A sieve searches one target (Xu & Bethard §3.2): ontology names ``O``, training mentions ``D`` or both ``OD``,
each per name (``T``) or per concept centroid (``C``). With ``accept_above`` set, a sieve only decides when its best
cosine reaches that value and otherwise passes the mention on; the default pipeline is exact → D-T (≥ 0.95) →
OD-T, so the most precise source decides whenever it is confident.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from medlink.encoders.base import Encoder, EncoderIdentity
from medlink.encoders.count_head import ConceptCountPredictor
from medlink.index import IndexEntry, VectorIndex
from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.terminology import Terminology

MAX_MENTION_CHARS = 1000  # longer mentions are truncated for encoding (the tokenizer would cut them anyway)


class CachingEncoder:
    """Wraps an encoder so that sieves share the vectors of the same mention, and repeats are encoded once.

    Linkers made with ``with_config`` share one, each under its own linker lock, so the cache has a lock of its own:
    one thread's clearing it cannot pull a vector from under another's."""

    def __init__(self, encoder: Encoder, capacity: int = 100_000) -> None:
        self.encoder = encoder
        self.capacity = capacity
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def identity(self) -> EncoderIdentity:
        return self.encoder.identity

    @property
    def dimension(self) -> int:
        return self.encoder.dimension

    @property
    def count_head(self) -> ConceptCountPredictor | None:
        return self.encoder.count_head

    def encode(self, texts: Sequence[str], batch_size: int = 128, progress: bool = False) -> np.ndarray:
        texts = [self._bounded(text) for text in texts]
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
            if missing:
                if len(self._vectors) + len(missing) > self.capacity:
                    self._vectors.clear()
                for text, vector in zip(missing, self.encoder.encode(missing, batch_size, progress), strict=True):
                    self._vectors[text] = vector
            return np.stack([self._vectors[t] for t in texts])

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()

    @staticmethod
    def _bounded(text: str) -> str:
        if len(text) > MAX_MENTION_CHARS:
            warnings.warn(
                f"a mention of {len(text):,} characters was truncated to {MAX_MENTION_CHARS} for encoding", stacklevel=4
            )
            return text[:MAX_MENTION_CHARS]
        return text


class HeadCounter:
    """The linker's concept counter from an encoder's count head, reusing the vectors the dense sieves cached."""

    def __init__(self, encoder: CachingEncoder, head: ConceptCountPredictor) -> None:
        if head.dimension != encoder.dimension:
            raise ValueError(f"count head of dimension {head.dimension} for a {encoder.dimension}-dimensional encoder")
        self.encoder, self.head = encoder, head

    @property
    def most(self) -> int:
        """The head's last class, which means "this many or more"."""
        return len(self.head.bias)

    def predict_counts(self, texts: Sequence[str]) -> list[int]:
        return self.head.predict(self.encoder.encode(list(texts))).tolist()


@dataclass(frozen=True)
class DenseStrategy:
    """Where to search: ``targets`` is ``O``, ``D`` or ``OD``; ``representation`` ``T`` (names) or ``C``."""

    targets: str = "OD"
    representation: str = "T"

    def __post_init__(self) -> None:
        if not self.targets or set(self.targets) - {"O", "D"} or self.representation not in ("T", "C"):
            raise ValueError(f"unknown search strategy {self.name!r}: targets O, D or OD; representation T or C")

    @property
    def name(self) -> str:
        return f"{self.targets}-{self.representation}"

    @classmethod
    def parse(cls, name: str) -> DenseStrategy:
        targets, _, representation = name.upper().partition("-")
        return cls(targets, representation or "T")


class DenseSieve:
    """Links by cosine similarity; decides when the best score reaches ``accept_above`` (always if ``None``)."""

    stage = Stage.DENSE

    def __init__(
        self,
        index: VectorIndex,
        encoder: Encoder,
        terminology: Terminology,
        strategy: DenseStrategy | str = "OD-T",
        accept_above: float | None = None,
        top_k: int = 10,
    ) -> None:
        self.index = index
        self.encoder = encoder
        self.terminology = terminology
        self.strategy = DenseStrategy.parse(strategy) if isinstance(strategy, str) else strategy
        self.accept_above = accept_above
        self.top_k = top_k
        self.name = self.strategy.name

    def usable(self) -> bool:
        """A sieve over training mentions has nothing to search when the index holds none."""
        return any(self.index.count(source) for source in self.strategy.targets)

    def candidates(self, texts: Sequence[str]) -> list[list[Candidate]]:
        """Concept candidates per text, best first, one per concept (a shared name yields all its concepts)."""
        vectors = self.encoder.encode(list(texts))
        sources = tuple(self.strategy.targets)
        if self.strategy.representation == "C":
            found = self.index.search_centroids(vectors, self.top_k, sources)
            return [
                [Candidate(cid, self.terminology.concept_preferred_name(cid), score) for cid, score in hits]
                for hits in found
            ]
        return [
            candidates_from_hits((hit.entry, hit.score) for hit in hits)
            for hits in self.index.search(vectors, self.top_k, sources)
        ]

    def link_batch(self, items: Sequence[tuple[str, str]]) -> list[LinkResult | None]:
        found = self.candidates([text for text, _ in items])
        return [
            decide(text, candidates, self.stage, self.name, self.accept_above, self.terminology)
            for (text, _key), candidates in zip(items, found, strict=True)
        ]


def candidates_from_hits(hits: Iterable[tuple[IndexEntry, float]]) -> list[Candidate]:
    """One candidate per concept, best first; an entry naming several concepts yields all of them. A training
    mention that claims several concepts at once answers only its own text (the exact sieve): as a neighbour of
    another text, its set would be read as alternatives, the first winning."""
    seen: dict[str, Candidate] = {}
    for entry, score in hits:
        if entry.several:
            continue
        for concept in entry.concepts:
            seen.setdefault(concept, Candidate(concept, entry.text, score))
    return list(seen.values())


def decide(
    text: str,
    candidates: Sequence[Candidate],
    stage: Stage,
    strategy: str,
    accept_above: float | None,
    terminology: Terminology,
) -> LinkResult | None:
    """The result a retrieval sieve gives: its best candidate (and every concept tied on the same name), or
    ``None`` to pass the mention on when there is none or it scores below ``accept_above``."""
    if not candidates or (accept_above is not None and candidates[0].score < accept_above):
        return None
    best = candidates[0]
    tied = tuple(c.concept_id for c in candidates if c.name == best.name and c.score == best.score)
    shared = f", a name shared by {len(tied)} concepts" if len(tied) > 1 else ""
    return LinkResult(
        mention=text,
        concepts=tied,
        stage=stage,
        score=best.score,
        matched_name=best.name,
        preferred_names=tuple(terminology.concept_preferred_name(c) for c in tied),
        candidates=tuple(candidates),
        strategy=strategy,
        reason=f"{strategy}: best match {best.name!r} scores {best.score:.3f}{shared}",
    )
