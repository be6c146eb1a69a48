"""Gathers the mentions of concurrent requests into linker batches, fairly, within a time budget.

Encoding is the cost of linking, and an encoder batch of 64 mentions costs far less than 64 batches of one. Each
request puts its mentions on a queue and awaits its results; one task links what has queued up in a worker thread
and hands every request its share. Three rules keep one large or slow request from stalling the others:

- **fair batches**: a batch takes one mention from each waiting request in turn until it holds ``batch_chars``
  characters, so a request of a thousand long mentions is linked over many small batches, and a request of one
  short mention that arrives meanwhile is answered after the batch in progress;
- **a time budget**: a request still unanswered ``request_seconds`` after it arrived fails with
  :class:`OverBudget`, and its remaining mentions are dropped (so are those of a client that went away);
- **a bounded queue**: a request that would make more than ``max_queued`` mentions wait is refused at once with
  :class:`Saturated`, which the service answers with 503 and ``Retry-After``;
- **a stuck batch is stopped**: with worker processes, a batch that has run :data:`STUCK_BUDGETS` request budgets
  is stopped (its worker killed and replaced); its requests have had their 503 by then, and the other workers
  went on with the rest.

Up to ``runner.concurrency`` batches are linked at once (one per worker process).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from medlink.linking import LinkResult, Mention
from medlink.serve.busy import OverBudget, Saturated

# A link batch still running after this many request budgets is stuck (a normal one takes seconds at most).
STUCK_BUDGETS = 3

if TYPE_CHECKING:
    from medlink.serve.workers import Runner


@dataclass
class _Request:
    mentions: Sequence[str | Mention]
    done: asyncio.Future[list[LinkResult]]
    results: list[LinkResult | None] = field(init=False)
    taken: int = 0  # mentions handed to a batch so far
    linked: int = 0  # mentions whose result is in

    def __post_init__(self) -> None:
        self.results = [None] * len(self.mentions)

    @property
    def waiting(self) -> int:
        return len(self.mentions) - self.taken


def _chars(mention: str | Mention) -> int:
    return len(mention.text if isinstance(mention, Mention) else mention) + 1


@dataclass
class LinkBatcher:
    """Links the mentions of concurrent requests together through ``runner``; ``observe`` is told each batch's
    size."""

    runner: Runner
    batch_chars: int = 16_000
    wait_seconds: float = 0.002
    request_seconds: float = 10.0
    max_queued: int = 20_000
    observe: Callable[[int], None] = lambda size: None
    _active: list[_Request] = field(default_factory=list, init=False)
    _wake: asyncio.Event = field(default_factory=asyncio.Event, init=False)
    _task: asyncio.Task[None] | None = field(default=None, init=False)
    _linking: set[asyncio.Task[None]] = field(default_factory=set, init=False)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="medlink-link-batcher")

    async def stop(self) -> None:
        """Links what is still queued, then stops (the server stops taking requests first)."""
        while self._active or self._linking:
            await asyncio.sleep(self.wait_seconds or 0.001)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    @property
    def queued(self) -> int:
        """Mentions waiting to be linked."""
        return sum(request.waiting for request in self._active if not request.done.done())

    async def link(self, mentions: Sequence[str | Mention]) -> list[LinkResult]:
        if self._task is None or self._task.done():
            raise RuntimeError("the link batcher is not running")
        if self.queued + len(mentions) > self.max_queued:
            raise Saturated(f"{self.queued:,} mentions are waiting already (the limit is {self.max_queued:,})")
        loop = asyncio.get_running_loop()
        request = _Request(mentions, loop.create_future())
        self._active.append(request)
        self._wake.set()
        expiry = loop.call_later(self.request_seconds, self._expire, request)  # answered at its deadline, whatever
        try:
            return await request.done
        finally:
            expiry.cancel()

    def _expire(self, request: _Request) -> None:
        if not request.done.done():
            request.done.set_exception(
                OverBudget(
                    f"not linked within the request budget of {self.request_seconds:g} s "
                    f"({request.linked:,} of {len(request.mentions):,} mentions linked): send fewer or shorter "
                    "mentions per request"
                )
            )

    async def _run(self) -> None:
        slots = asyncio.Semaphore(self.runner.concurrency)
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self.wait_seconds:
                await asyncio.sleep(self.wait_seconds)  # a moment for concurrent requests to join
            while self._active:
                await slots.acquire()
                self._drop_finished()
                batch = self._next_batch()
                if not batch:
                    slots.release()
                    break  # what is active is being linked already; a new request or a stopped batch wakes us
                task = asyncio.create_task(self._link(batch))
                self._linking.add(task)
                task.add_done_callback(self._linking.discard)
                task.add_done_callback(lambda _: slots.release())

    def _drop_finished(self) -> None:
        """Forget requests answered already: past their budget (``_expire``) or whose client went away."""
        self._active = [request for request in self._active if not request.done.done()]  # one pass, not a remove each

    def _next_batch(self) -> list[tuple[_Request, int]]:
        """One mention from each waiting request in turn, until the batch holds ``batch_chars`` characters (and
        always at least one mention)."""
        takers = self._active
        batch: list[tuple[_Request, int]] = []
        budget = self.batch_chars
        while budget > 0:
            took = False
            for request in takers:
                if request.waiting and budget > 0:
                    cost = _chars(request.mentions[request.taken])
                    if batch and cost > budget:
                        budget = 0
                        break
                    batch.append((request, request.taken))
                    request.taken += 1
                    budget -= cost
                    took = True
            if not took:
                break
        return batch

    async def _link(self, batch: list[tuple[_Request, int]]) -> None:
        mentions = [request.mentions[position] for request, position in batch]
        requests = list({id(request): request for request, _ in batch}.values())
        # Each request is answered at its own deadline whatever its batches do (``_expire``). A batch itself is
        # stopped only when it is stuck: it has run STUCK_BUDGETS whole budgets, which no batch of batch_chars
        # characters takes, even on a machine this overloaded. Stopping one when its first request expired, or
        # after one budget, restarted workers under mere overload (~3 CPU-seconds each) until none was left.
        allowed = STUCK_BUDGETS * self.request_seconds
        try:
            results = await self.runner.run("link_many", (mentions,), time.monotonic() + allowed)
        except Exception as error:  # every request of the batch learns of it; the batcher goes on
            for request in requests:
                if not request.done.done():
                    request.done.set_exception(error)
            self._wake.set()
            return
        self.observe(len(mentions))
        for (request, position), result in zip(batch, results, strict=True):
            request.results[position] = result
            request.linked += 1
            if request.linked == len(request.mentions) and not request.done.done():
                request.done.set_result(request.results)  # type: ignore[arg-type]  # every slot is filled
        self._wake.set()
