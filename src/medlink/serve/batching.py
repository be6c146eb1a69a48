"""Gathers the mentions of concurrent requests into one linker batch.

Encoding is the cost of linking, and an encoder batch of 64 mentions costs far less than 64 batches of one. Each
request puts its mentions on a queue and awaits its results; one task takes whatever has queued up (waiting a
moment for more), links it in a worker thread with one ``link_many`` call and hands every request its share.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from medlink.linking import Linker, LinkResult, Mention


@dataclass
class _Request:
    mentions: Sequence[str | Mention]
    done: asyncio.Future[list[LinkResult]]


@dataclass
class LinkBatcher:
    """Links the mentions of concurrent requests together; ``observe`` is told each batch's size."""

    linker: Linker
    max_mentions: int = 4096
    wait_seconds: float = 0.002
    observe: Callable[[int], None] = lambda size: None
    _queue: asyncio.Queue[_Request] = field(default_factory=asyncio.Queue, init=False)
    _task: asyncio.Task[None] | None = field(default=None, init=False)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="medlink-link-batcher")

    async def stop(self) -> None:
        """Links what is still queued, then stops (the server stops taking requests first)."""
        while not self._queue.empty():
            await asyncio.sleep(self.wait_seconds or 0.001)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def link(self, mentions: Sequence[str | Mention]) -> list[LinkResult]:
        if self._task is None or self._task.done():
            raise RuntimeError("the link batcher is not running")
        done: asyncio.Future[list[LinkResult]] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Request(mentions, done))
        return await done

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            size = len(batch[0].mentions)
            if self.wait_seconds and size < self.max_mentions:
                await asyncio.sleep(self.wait_seconds)
            while size < self.max_mentions and not self._queue.empty():
                request = self._queue.get_nowait()
                batch.append(request)
                size += len(request.mentions)
            await self._link(batch, size)

    async def _link(self, batch: list[_Request], size: int) -> None:
        mentions = [mention for request in batch for mention in request.mentions]
        try:
            results = await asyncio.to_thread(self.linker.link_many, mentions)
        except Exception as error:  # every request of the batch learns of it; the batcher goes on
            for request in batch:
                if not request.done.done():
                    request.done.set_exception(error)
            return
        self.observe(size)
        start = 0
        for request in batch:
            end = start + len(request.mentions)
            if not request.done.done():  # a client that went away leaves a cancelled future
                request.done.set_result(results[start:end])
            start = end
