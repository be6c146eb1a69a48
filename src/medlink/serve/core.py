"""What the API routes and the web pages share: the linker behind its fair batcher, the trial normalizer (made on
first use), the trial matcher, and the limits they answer within. Work the service cannot take now raises
:class:`Busy`, which both sides answer with 503."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from medlink.errors import MedlinkError
from medlink.linking import Linker, LinkResult, Mention
from medlink.linking.annotation.annotator import Annotation, AnnotatorConfig
from medlink.linking.annotation.tagger import SpanTagger
from medlink.serve.batching import Busy, LinkBatcher
from medlink.serve.settings import ServiceSettings

if TYPE_CHECKING:  # the trial modules load only when a trial request comes
    from medlink.trials.matching.matcher import MatchResult, TrialMatcher
    from medlink.trials.normalization.normalizer import NormalizedTrial, TrialNormalizer
    from medlink.trials.records import TrialRecord

AT_A_TIME = 16  # trial records normalized, or documents annotated, between two looks at the request's time budget


NO_TRIAL_INDEX = "this service has no trial index: start it with --trials-index DIR"


class NoTrialIndex(MedlinkError):
    """The service was started without a trial index."""


@dataclass
class ServiceCore:
    linker: Linker
    settings: ServiceSettings
    batcher: LinkBatcher
    matcher: TrialMatcher | None = None
    tagger: SpanTagger | None = None  # the span tagger annotation uses (the packaged one, when installed)
    _normalizer: TrialNormalizer | None = None
    _normalizer_made: asyncio.Lock = field(default_factory=asyncio.Lock)  # concurrent first requests make it once
    _trial_slots: asyncio.Semaphore | None = None

    def __post_init__(self) -> None:
        self._trial_slots = asyncio.Semaphore(self.settings.max_concurrent_trials)

    async def link(self, mentions: Sequence[str | Mention]) -> list[LinkResult]:
        return await self.batcher.link(list(mentions))

    async def normalize(self, records: list[TrialRecord]) -> list[NormalizedTrial]:
        """Records normalized a chunk at a time within the request's time budget (the one-time set-up of the
        normalizer, which loads the drug terminology, not counted)."""
        from medlink.trials.normalization.normalizer_spec import normalizer_around

        async with self._trial_slot():
            async with self._normalizer_made:
                if self._normalizer is None:
                    self._normalizer = await asyncio.to_thread(normalizer_around, self.linker)
                ready = self._normalizer
            return await self._in_chunks(ready.normalize_batch, records, "normalized", "records")

    async def annotate(self, texts: list[str], config: AnnotatorConfig) -> list[list[Annotation]]:
        """Documents annotated in a worker thread, a few at a time (annotation links many spans at once), within
        the request's time budget."""
        async with self._trial_slot():
            return await self._in_chunks(
                lambda chunk: self.linker.annotate_many(chunk, config), texts, "annotated", "documents", size=len
            )

    async def match(self, note: str, top: int) -> MatchResult:
        if self.matcher is None:
            raise NoTrialIndex(NO_TRIAL_INDEX)
        matcher = self.matcher
        async with self._trial_slot():
            return await asyncio.to_thread(matcher.match, note, top)

    async def _in_chunks(
        self,
        work: Callable[[list[Any]], list[Any]],
        items: list[Any],
        done: str,
        what: str,
        size: Callable[[Any], int] | None = None,
    ) -> list[Any]:
        """``work`` over ``items`` a chunk at a time in a worker thread (the items are independent), looking at the
        request's time budget between chunks. A chunk holds :data:`AT_A_TIME` items, and with ``size`` (a document's
        length) no more than ``settings.batch_chars`` of them once it has one: sixteen documents of the longest
        allowed size were half a minute of work between two looks at a ten-second budget."""
        deadline = time.monotonic() + self.settings.request_seconds
        results: list[Any] = []
        start = 0
        while start < len(items):
            if time.monotonic() > deadline:
                raise Busy(
                    f"not {done} within the request budget of {self.settings.request_seconds:g} s "
                    f"({start:,} of {len(items):,} {what} done): send fewer {what} per request"
                )
            end, held = start + 1, size(items[start]) if size else 0
            while end < min(len(items), start + AT_A_TIME):
                more = size(items[end]) if size else 0
                if held + more > self.settings.batch_chars:
                    break
                held, end = held + more, end + 1
            results += await asyncio.to_thread(work, items[start:end])
            start = end
        return results

    def _trial_slot(self) -> asyncio.Semaphore:
        """A slot for heavy work (trial requests, annotation), or :class:`Busy` when all are taken."""
        assert self._trial_slots is not None  # made in __post_init__
        if self._trial_slots.locked():
            raise Busy(
                f"{self.settings.max_concurrent_trials} trial or annotation requests are running already; retry shortly"
            )
        return self._trial_slots
