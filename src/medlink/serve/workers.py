"""Where the service's request work runs: worker processes it owns, or threads of its own process.

Python cannot interrupt a regular expression or a loop that holds the interpreter, so a time budget watched from
another thread is advice, not a limit. :class:`WorkerPool` runs each piece of work (a link batch, a chunk of
documents or trial records, a match) in one of ``count`` worker processes, each holding its own copy of the
service's :class:`~medlink.serve.work.ServiceWork` (the index, terminology and models are memory-mapped files:
the copies share their pages). When a piece of work outlives its request's budget, or its client goes away, the
worker running it is killed and a fresh one started in its place; that request gets 503 and every other request
goes on. Restarts are bounded (``restarts_per_minute``): past the bound, requests wait for a worker and get 503
until the minute passes, instead of the machine spending itself on starting interpreters.

:class:`InProcess` runs the same work in threads of the service's process (``--workers 0``, and linkers that
cannot be copied to another process): nothing stops work once it has begun.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pickle
import time
from collections import deque
from typing import Any, Protocol

from medlink.processes import WorkerProcess, WorkerProcessError, worker_environment
from medlink.serve.busy import Busy, OverBudget
from medlink.serve.metrics import ServiceMetrics
from medlink.serve.work import ServiceWork, hold, run

log = logging.getLogger("medlink.serve")


class Runner(Protocol):
    """Runs a :class:`ServiceWork` method within a deadline (``time.monotonic()``), ``concurrency`` at a time."""

    concurrency: int

    async def start(self) -> None: ...

    async def run(self, method: str, args: tuple[Any, ...], deadline: float) -> Any: ...

    async def stop(self) -> None: ...

    def describe(self) -> dict[str, int]: ...

    def ready(self) -> bool:
        """Whether work can be taken now (a pool whose workers all died and are not back yet cannot)."""
        ...


class InProcess:
    """The work in a thread of this process, one piece at a time (the linker's lock would serialize more)."""

    concurrency = 1

    def __init__(self, work: ServiceWork) -> None:
        self.work = work

    async def start(self) -> None:
        return None

    async def run(self, method: str, args: tuple[Any, ...], deadline: float) -> Any:
        return await asyncio.to_thread(getattr(self.work, method), *args)

    async def stop(self) -> None:
        return None

    def describe(self) -> dict[str, int]:
        return {"workers": 0}

    def ready(self) -> bool:
        return True


class WorkerPool:
    """``count`` worker processes, each with ``threads`` threads for ONNX Runtime (the encoders' intra-op threads, the
    span tagger's windows run at once), holding copies of ``work``."""

    def __init__(
        self,
        work: ServiceWork,
        count: int,
        restarts_per_minute: int,
        metrics: ServiceMetrics | None = None,
        threads: int = 1,
    ) -> None:
        if count < 1:
            raise ValueError(f"a worker pool needs at least one worker, not {count}")
        self.concurrency = count
        self.restarts_per_minute = restarts_per_minute
        self._work = pickle.dumps(work)  # refused here, not in a worker, when the linker cannot travel
        self._metrics = metrics
        self._environment = worker_environment({"OMP_NUM_THREADS": str(threads)})
        self._idle: asyncio.Queue[WorkerProcess] = asyncio.Queue()
        self._live: set[WorkerProcess] = set()
        self._restarts: deque[float] = deque()
        self._starting: set[asyncio.Task[None]] = set()
        self._opening: set[WorkerProcess] = set()  # started, not holding the work yet
        self._stopped = False

    async def start(self) -> None:
        """Start every worker and wait until each holds its work (an error in one, such as an index it cannot
        read, is raised here: the service does not start half-able)."""
        workers = await asyncio.gather(*(asyncio.to_thread(self._started) for _ in range(self.concurrency)))
        for worker in workers:
            self._ready(worker)

    async def run(self, method: str, args: tuple[Any, ...], deadline: float) -> Any:
        worker = await self._take_idle(deadline)
        call = asyncio.ensure_future(asyncio.to_thread(worker.call, run, method, *args))
        call.add_done_callback(_quietly)  # a killed worker's call ends with an error nobody awaits
        try:
            result = await asyncio.wait_for(asyncio.shield(call), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            self._kill(worker, f"{method} ran past its request's budget")
            raise OverBudget(
                "not answered within the request budget: the work was stopped (send less per request)"
            ) from None
        except asyncio.CancelledError:  # the client went away, or the service is stopping
            self._kill(worker, f"{method} was abandoned by its client")
            raise
        except WorkerProcessError as error:  # it died by itself (out of memory, a crash in native code)
            log.error("a worker process died: %s", error)
            self._replace(worker)
            raise Busy("the worker process answering this request ended; retry shortly") from None
        except BaseException:
            self._idle.put_nowait(worker)  # the work's own error: the worker is fine
            raise
        self._idle.put_nowait(worker)
        return result

    async def _take_idle(self, deadline: float) -> WorkerProcess:
        """An idle worker, or :class:`OverBudget` at ``deadline``. Not ``asyncio.wait_for``: in Python 3.11 it
        can lose an item that arrives as it times out; and a worker taken just as the caller is cancelled goes
        back, or the pool would be a worker short for good."""
        getter = asyncio.ensure_future(self._idle.get())
        try:
            await asyncio.wait({getter}, timeout=max(0.0, deadline - time.monotonic()))
        except asyncio.CancelledError:
            if getter.done() and not getter.cancelled():
                self._idle.put_nowait(getter.result())
            getter.cancel()
            raise
        if not getter.done():
            getter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await getter
        if getter.cancelled():
            raise OverBudget("no worker process became free within the request budget; retry shortly")
        return getter.result()

    async def stop(self) -> None:
        self._stopped = True
        for task in self._starting:
            task.cancel()
        for worker in [*self._live, *self._opening]:
            worker.kill()
        await asyncio.gather(*(asyncio.to_thread(worker.close, 1) for worker in self._live), return_exceptions=True)
        self._live.clear()

    def describe(self) -> dict[str, int]:
        return {"workers": len(self._live), "idle_workers": self._idle.qsize()}

    def ready(self) -> bool:
        return bool(self._live)

    def _started(self) -> WorkerProcess:
        """A new worker holding the work (in a thread: starting one takes seconds; :meth:`stop` kills the ones
        still starting, whose threads it cannot wait for)."""
        worker = WorkerProcess(self._environment)
        self._opening.add(worker)
        try:
            if self._stopped:
                raise WorkerProcessError("the service is stopping")
            worker.call(hold, pickle.loads(self._work))
        except BaseException:
            worker.kill()
            worker.close(1)
            raise
        finally:
            self._opening.discard(worker)
        return worker

    def _ready(self, worker: WorkerProcess) -> None:
        if self._stopped:
            worker.kill()
            return
        self._live.add(worker)
        self._idle.put_nowait(worker)

    def _kill(self, worker: WorkerProcess, why: str) -> None:
        log.warning("killed worker process %d: %s", worker.pid, why)
        worker.kill()
        if self._metrics is not None:
            self._metrics.worker_kills.inc()
        self._replace(worker)

    def _replace(self, worker: WorkerProcess) -> None:
        """Start another worker in ``worker``'s place, now or, past the restart budget, once the oldest restart
        of the last minute has aged out of it."""
        self._live.discard(worker)
        self._schedule_start()

    def _schedule_start(self) -> None:
        if self._stopped:
            return
        now = time.monotonic()
        while self._restarts and now - self._restarts[0] > 60:
            self._restarts.popleft()
        delay = 0.0
        if len(self._restarts) >= self.restarts_per_minute:
            delay = 60 - (now - self._restarts[0])
            log.error(
                "worker restart budget spent (%d a minute): next start in %.0f s", self.restarts_per_minute, delay
            )
        self._restarts.append(now + delay)
        task = asyncio.get_running_loop().create_task(self._restart(delay))
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _restart(self, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        try:
            worker = await asyncio.to_thread(self._started)
        except Exception as error:  # tried again, within the restart budget; meanwhile the pool runs short
            log.error("could not start a worker process: %s", error)
            self._schedule_start()
            return
        if self._metrics is not None:
            self._metrics.worker_restarts.inc()
        self._ready(worker)


def _quietly(call: asyncio.Future[Any]) -> None:
    if not call.cancelled():
        with contextlib.suppress(BaseException):
            call.exception()
