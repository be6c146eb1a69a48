"""What the API routes and the web pages share: the linker behind its fair batcher, the runner that does the work
(worker processes, or threads), the trial matcher, and the limits they answer within. Work the service cannot take
now raises :class:`Busy`, which both sides answer with 503."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from medlink.errors import MedlinkError
from medlink.linking import Linker, LinkResult, Mention
from medlink.linking.annotation.annotator import Annotation
from medlink.serve.batching import LinkBatcher
from medlink.serve.busy import Busy
from medlink.serve.settings import ServiceSettings
from medlink.serve.workers import Runner

if TYPE_CHECKING:  # the trial modules load only when a trial request comes
    from medlink.trials.matching.matcher import MatchResult, TrialMatcher
    from medlink.trials.normalization.normalizer import NormalizedTrial
    from medlink.trials.records import TrialRecord

AT_A_TIME = 16  # trial records normalized, or documents annotated, between two looks at the request's time budget
_SET_UP_SECONDS = 300  # the trial normalizer's one-time set-up (it loads the drug terminology, built on first use)


NO_TRIAL_INDEX = "this service has no trial index: start it with --trials-index DIR"


class NoTrialIndex(MedlinkError):
    """The service was started without a trial index."""


@dataclass
class ServiceCore:
    linker: Linker  # this process's copy: the terminology and limits the routes read (the runner does the work)
    settings: ServiceSettings
    batcher: LinkBatcher
    runner: Runner
    matcher: TrialMatcher | None = None
    _heavy_at_once: int = field(init=False)
    _trial_slots: asyncio.Semaphore = field(init=False)
    _normalizer_lock: asyncio.Lock = field(init=False)
    _normalizer_ready: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        heavy = self.settings.max_concurrent_trials
        if self.runner.concurrency > 1:  # one worker is always left to link with, whatever the heavy requests do
            heavy = min(heavy, self.runner.concurrency - 1)
        self._heavy_at_once = heavy
        self._trial_slots = asyncio.Semaphore(heavy)
        self._normalizer_lock = asyncio.Lock()

    async def link(self, mentions: Sequence[str | Mention]) -> list[LinkResult]:
        return await self.batcher.link(list(mentions))

    async def normalize(self, records: list[TrialRecord]) -> list[NormalizedTrial]:
        """Records normalized a chunk at a time within the request's time budget (the one-time set-up of the
        normalizer, which loads the drug terminology, not counted)."""
        async with self._trial_slot():
            await self._prepare_normalizer()
            return await self._in_chunks("normalize_batch", (), records, "normalized", "records")

    async def annotate(self, texts: list[str], context: bool, entity_type: str | None) -> list[list[Annotation]]:
        """Documents annotated a few at a time (annotation links many spans at once), within the request's time
        budget."""
        async with self._trial_slot():
            return await self._in_chunks(
                "annotate_many", (context, entity_type), texts, "annotated", "documents", size=len
            )

    async def match(self, note: str, top: int) -> MatchResult:
        if self.matcher is None:
            raise NoTrialIndex(NO_TRIAL_INDEX)
        async with self._trial_slot():
            deadline = time.monotonic() + self.settings.request_seconds
            return await self.runner.run("match", (note, top), deadline)  # type: ignore[no-any-return]

    async def _prepare_normalizer(self) -> None:
        """The normalizer set up once by the runner, outside any request's budget (every worker in turn may need
        it: a worker started after a kill makes its own on its first chunk)."""
        async with self._normalizer_lock:
            if not self._normalizer_ready:
                for _ in range(self.runner.concurrency):
                    await self.runner.run("prepare_normalizer", (), time.monotonic() + _SET_UP_SECONDS)
                self._normalizer_ready = True

    async def _in_chunks(
        self,
        method: str,
        extra: tuple[Any, ...],
        items: list[Any],
        done: str,
        what: str,
        size: Callable[[Any], int] | None = None,
    ) -> list[Any]:
        """The runner's ``method`` over ``items`` a chunk at a time (``extra``: its other arguments; the items are
        independent), each chunk within what is left of the request's time budget. A chunk holds
        :data:`AT_A_TIME` items, and with ``size`` (a document's length) no more than ``settings.batch_chars`` of
        them once it has one: in a thread, work cannot be stopped, only not begun."""
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
            results += await self.runner.run(method, (items[start:end], *extra), deadline)
            start = end
        return results

    def _trial_slot(self) -> asyncio.Semaphore:
        """A slot for heavy work (trial requests, annotation), or :class:`Busy` when all are taken."""
        if self._trial_slots.locked():
            raise Busy(f"{self._heavy_at_once} trial or annotation requests are running already; retry shortly")
        return self._trial_slots
