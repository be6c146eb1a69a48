"""The service's batcher: fair batches, a time budget that drops the work, a bounded queue — with a real linker
whose one sieve is slowed down, so that the order of answers shows who waited for whom."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest

from medlink.linking import Linker, LinkResult, Stage
from medlink.serve.batching import STUCK_BUDGETS, LinkBatcher
from medlink.serve.busy import OverBudget, Saturated
from medlink.serve.work import ServiceWork
from medlink.serve.workers import InProcess
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


def slow_linker(seconds: float) -> tuple[InProcess, SlowSieve]:
    """A runner over a linker whose one sieve is slow (in a thread: what ``--workers 0`` runs)."""
    sieve = SlowSieve(seconds)
    return InProcess(ServiceWork(Linker(load_default_terminology(), sieves=[sieve]))), sieve


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


class Measuring:
    """Work that notes the lengths of each chunk it is given."""

    def __init__(self) -> None:
        self.chunks: list[list[int]] = []

    def measure(self, chunk: list[str]) -> list[int]:
        self.chunks.append([len(text) for text in chunk])
        return [len(text) for text in chunk]


def test_long_documents_are_annotated_in_chunks_of_at_most_batch_chars() -> None:
    from medlink.serve.core import AT_A_TIME, ServiceCore
    from medlink.serve.settings import ServiceSettings

    work = Measuring()
    runner = InProcess(work)  # type: ignore[arg-type]  # any object's methods run the same way
    core = ServiceCore(None, ServiceSettings(batch_chars=1_000), None, runner)  # type: ignore[arg-type]
    chunks = work.chunks

    texts = ["a" * 400] * 5 + ["b" * 3_000] + ["c" * 10] * 40
    measured = asyncio.run(core._in_chunks("measure", (), texts, "annotated", "documents", size=len))
    assert measured == [len(t) for t in texts]
    assert chunks[:3] == [[400, 400], [400, 400], [400]] and chunks[3] == [3_000]  # one long document goes alone
    assert all(len(chunk) <= AT_A_TIME and (len(chunk) == 1 or sum(chunk) <= 1_000) for chunk in chunks)
    records = asyncio.run(core._in_chunks("measure", (), ["r" * 5_000] * 40, "normalized", "records"))
    assert len(records) == 40 and [len(chunk) for chunk in chunks[-3:]] == [AT_A_TIME, AT_A_TIME, 8]


class Stalling:
    """A runner (two at once, as two worker processes) on which a batch holding "stall" hangs until the pool
    would stop it; it links the rest with ``linker``. Notes when each batch was due to be stopped."""

    concurrency = 2

    def __init__(self, linker: InProcess) -> None:
        self.linker, self.batches, self.allowed = linker, [], []

    async def run(self, method: str, args: tuple, deadline: float) -> list:
        (mentions,) = args
        self.batches.append(list(mentions))
        self.allowed.append(deadline - time.monotonic())
        if "stall" in mentions:
            await asyncio.sleep(max(0.0, deadline - time.monotonic()))
            raise OverBudget("stopped")
        return await self.linker.run(method, args, deadline)


def test_a_stuck_batch_is_stopped_after_its_budgets_while_the_other_worker_answers() -> None:
    linker, _ = slow_linker(0.01)
    runner = Stalling(linker)

    async def scenario() -> tuple[object, object, float]:
        batcher = LinkBatcher(runner, batch_chars=1_000, wait_seconds=0, request_seconds=0.6)  # type: ignore[arg-type]
        batcher.start()
        culprit = asyncio.create_task(batcher.link(["stall"]))
        await asyncio.sleep(0.1)  # the stuck batch holds one worker
        started = time.monotonic()
        neighbour = await batcher.link(["heart attack", "asthma"])
        answered_in = time.monotonic() - started
        outcome = await asyncio.gather(culprit, return_exceptions=True)
        await batcher.stop()
        return outcome[0], neighbour, answered_in

    culprit, neighbour, answered_in = run(scenario())
    assert isinstance(culprit, OverBudget) and "request budget of 0.6 s" in str(culprit)  # answered at its deadline
    assert [result.mention for result in neighbour] == ["heart attack", "asthma"]  # type: ignore[attr-defined]
    assert answered_in < 0.3  # by the other worker, not after the stuck batch
    assert runner.batches[0] == ["stall"] and runner.allowed[0] == pytest.approx(STUCK_BUDGETS * 0.6, abs=0.05)


def test_a_worker_taken_as_its_caller_is_cancelled_goes_back_to_the_pool() -> None:
    from medlink.serve.workers import WorkerPool

    async def scenario() -> int:
        pool = WorkerPool(ServiceWork(Linker.load(exact_only=True)), 1, 10)  # no process is started here
        taker = asyncio.create_task(pool._take_idle(time.monotonic() + 5))
        await asyncio.sleep(0)  # it waits for an idle worker
        pool._idle.put_nowait("a worker")  # type: ignore[arg-type]
        await asyncio.sleep(0)  # its getter takes it; the taker has not resumed yet
        taker.cancel()  # a client that left, at that very moment
        with pytest.raises(asyncio.CancelledError):
            await taker
        return pool._idle.qsize()

    assert run(scenario()) == 1
