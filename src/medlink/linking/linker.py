"""The :class:`Linker`: mentions in, :class:`LinkResult` out, through an ordered list of sieves.

Mentions are normalized once, repeats are linked once (``link_many`` deduplicates and a bounded cache remembers
earlier keys), and the first sieve that finds a concept decides. A mention that no sieve links is ``nil`` with the
reason; an empty mention is ``empty``. Nothing is random, so the same input always gives the same output.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from medlink.linking.exact import ExactSieve
from medlink.linking.results import LinkResult, Mention, Stage
from medlink.terminology import Terminology


class Sieve(Protocol):
    """One linking stage: returns a result for a normalized key, or ``None`` to pass to the next stage."""

    stage: Stage

    def link(self, mention: str, key: str) -> LinkResult | None: ...


@dataclass(frozen=True)
class LinkerConfig:
    """Linker settings; the defaults work.

    cache_size: how many normalized keys keep their result; mention streams repeat a lot, so the cache is where
        most of the throughput comes from. 0 disables it.
    """

    cache_size: int = 200_000


class Linker:
    """Links mentions to the concepts of one terminology."""

    def __init__(
        self,
        terminology: Terminology,
        sieves: Sequence[Sieve] | None = None,
        config: LinkerConfig | None = None,
    ) -> None:
        self.terminology = terminology
        self.sieves: tuple[Sieve, ...] = tuple(sieves) if sieves is not None else (ExactSieve(terminology),)
        self.config = config or LinkerConfig()
        self._cache: dict[str, LinkResult] = {}

    @classmethod
    def from_path(cls, terminology_dir: Path | str, config: LinkerConfig | None = None) -> Linker:
        from medlink.terminology import load_terminology

        return cls(load_terminology(terminology_dir), config=config)

    @classmethod
    def default(cls, config: LinkerConfig | None = None) -> Linker:
        """The embedded default: MeSH descriptors shipped with medlink."""
        from medlink.resources import load_default_terminology

        return cls(load_default_terminology(), config=config)

    def link(self, mention: str | Mention) -> LinkResult:
        return self.link_many([mention])[0]

    def link_many(self, mentions: Iterable[str | Mention]) -> list[LinkResult]:
        """Link a batch; each distinct normalized key is decided once."""
        texts = [_text_of(mention) for mention in mentions]
        keys = [self.terminology.normalizer(text) for text in texts]
        decided: dict[str, LinkResult] = {}
        results = []
        for text, key in zip(texts, keys, strict=True):
            result = decided.get(key) or self._cache.get(key)
            if result is None:
                result = self._decide(text, key)
                self._remember(key, result)
            decided[key] = result
            results.append(result if result.mention == text else replace(result, mention=text))
        return results

    def _decide(self, text: str, key: str) -> LinkResult:
        if not key:
            return LinkResult(mention=text, concepts=(), stage=Stage.EMPTY, reason="the mention has no text to link")
        for sieve in self.sieves:
            result = sieve.link(text, key)
            if result is not None:
                return result
        tried = ", ".join(sieve.stage.value for sieve in self.sieves)
        return LinkResult(mention=text, concepts=(), stage=Stage.NIL, reason=f"no concept found by: {tried}")

    def _remember(self, key: str, result: LinkResult) -> None:
        if self.config.cache_size <= 0:
            return
        if len(self._cache) >= self.config.cache_size:
            self._cache.clear()  # a simple bound; a full cache means the stream has little repetition anyway
        self._cache[key] = result


def _text_of(mention: str | Mention) -> str:
    if isinstance(mention, Mention):
        return mention.text
    if not isinstance(mention, str):
        raise TypeError(f"a mention must be text or a Mention, got {type(mention).__name__}: {mention!r}")
    return mention
