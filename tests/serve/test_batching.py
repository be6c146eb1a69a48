"""The service's batcher: fair batches, a time budget that drops the work, a bounded queue — with a real linker
whose one sieve is slowed down, so that the order of answers shows who waited for whom."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest

from medlink.linking import Linker, LinkResult, Stage
from medlink.serve.batching import LinkBatcher, OverBudget, Saturated
from medlink.terminology import load_default_terminology


class SlowSieve:
    """Decides nothing; takes ``seconds`` per batch and remembers each batch's size."""

    stage = Stage.DENSE
    name = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds, self.batches = seconds, []

    def link_batch(self, items: Sequence[tuple[str, str]]) -> list[LinkResult | None]:
        self.batches.append(len(items))
        time.sleep(self.seconds)
        return [None] * len(items)


def slow_linker(seconds: float) -> tuple[Linker, SlowSieve]:
    sieve = SlowSieve(seconds)
    return Linker(load_default_terminology(), sieves=[sieve]), sieve


def run(coroutine):
    return asyncio.run(coroutine)


def test_a_small_request_is_answered_between_the_batches_of_a_large_one() -> None:
    linker, sieve = slow_linker(0.05)

    async def scenario() -> list[str]:
        batcher = LinkBatcher(linker, batch_chars=200, wait_seconds=0)
        batcher.start()
        finished: list[str] = []

        async def send(name: str, mentions: list[str]) -> None:
            results = await batcher.link(mentions)
            assert [r.mention for r in results] == mentions  # every result in its request's order
            finished.append(name)

        large = asyncio.create_task(send("large", [f"mention number {i}" for i in range(200)]))
        await asyncio.sleep(0.02)
        await send("small", ["heart attack"])
        await large
        await batcher.stop()
        return finished

    assert run(scenario()) == ["small", "large"]
    assert max(sieve.batches) <= 12  # batches of about 200 characters, not the whole large request


def test_a_request_over_its_time_budget_fails_and_its_remaining_work_is_dropped() -> None:
    linker, sieve = slow_linker(0.05)

    async def scenario() -> None:
        batcher = LinkBatcher(linker, batch_chars=100, wait_seconds=0, request_seconds=0.2)
        batcher.start()
        with pytest.raises(OverBudget, match=r"request budget of 0\.2 s"):
            await batcher.link([f"mention number {i}" for i in range(400)])
        assert batcher.queued == 0  # dropped, not linked on in the background
        after = await batcher.link(["heart attack"])  # and the batcher goes on
        assert [result.mention for result in after] == ["heart attack"] and "slow" in after[0].reason
        await batcher.stop()

    run(scenario())
    assert sum(sieve.batches) < 100  # far fewer than the 400 mentions were linked


def test_a_full_queue_refuses_at_once() -> None:
    linker, _ = slow_linker(0.2)

    async def scenario() -> None:
        batcher = LinkBatcher(linker, batch_chars=50, wait_seconds=0, max_queued=30)
        batcher.start()
        first = asyncio.create_task(batcher.link([f"mention {i}" for i in range(25)]))
        await asyncio.sleep(0.01)
        started = time.monotonic()
        with pytest.raises(Saturated, match="the limit is 30"):
            await batcher.link([f"other {i}" for i in range(15)])
        assert time.monotonic() - started < 0.1
        await first
        await batcher.stop()

    run(scenario())


def test_a_client_that_goes_away_leaves_no_work_behind() -> None:
    linker, sieve = slow_linker(0.05)

    async def scenario() -> None:
        batcher = LinkBatcher(linker, batch_chars=100, wait_seconds=0)
        batcher.start()
        gone = asyncio.create_task(batcher.link([f"mention number {i}" for i in range(300)]))
        await asyncio.sleep(0.12)
        gone.cancel()  # what the server does when the client disconnects
        await asyncio.sleep(0.15)
        assert batcher.queued == 0
        await batcher.stop()

    run(scenario())
    assert sum(sieve.batches) < 60


def test_long_documents_are_annotated_in_chunks_of_at_most_batch_chars() -> None:
    from medlink.serve.core import AT_A_TIME, ServiceCore
    from medlink.serve.settings import ServiceSettings

    core = ServiceCore(None, ServiceSettings(batch_chars=1_000), None)  # type: ignore[arg-type]  # no linking here
    chunks: list[list[int]] = []

    def work(chunk: list[str]) -> list[int]:
        chunks.append([len(text) for text in chunk])
        return [len(text) for text in chunk]

    texts = ["a" * 400] * 5 + ["b" * 3_000] + ["c" * 10] * 40
    assert asyncio.run(core._in_chunks(work, texts, "annotated", "documents", size=len)) == [len(t) for t in texts]
    assert chunks[:3] == [[400, 400], [400, 400], [400]] and chunks[3] == [3_000]  # one long document goes alone
    assert all(len(chunk) <= AT_A_TIME and (len(chunk) == 1 or sum(chunk) <= 1_000) for chunk in chunks)
    records = asyncio.run(core._in_chunks(work, ["r" * 5_000] * 40, "normalized", "records"))  # no size: count only
    assert len(records) == 40 and [len(chunk) for chunk in chunks[-3:]] == [AT_A_TIME, AT_A_TIME, 8]
