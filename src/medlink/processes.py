"""Worker processes that never re-import the caller's script.

``multiprocessing``'s spawn and forkserver start methods prepare each child by importing the parent's ``__main__``
again: a user's script with top-level ``medlink.link(...)`` and no ``if __name__ == "__main__"`` guard then runs
once more in every child, which waits on the cache lock its parent holds (a hang), and code read from standard
input cannot be re-imported at all (``BrokenProcessPool``). Forking is no way out either: ONNX Runtime's, torch's
and Arrow's threads do not survive it.

So medlink's workers are plain subprocesses running :func:`serve` (``python -P -c "…serve()"``: ``-P`` keeps the
current folder off their import path, where a ``typing.py`` lying there would shadow the standard library's), fed
pickled calls over their standard input and answering over a private copy of their standard output, after a
greeting that tells the answers from anything printed while the interpreter started. The caller's ``__main__`` is
never touched, from a script, a notebook, standard input or ``python -c``. A thread per worker does the waiting,
so :class:`WorkerProcesses` is used like ``concurrent.futures``' executors. Only module-level functions and
picklable arguments travel, as with any process pool; the workers import them from the caller's ``sys.path``.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import IO, Any, TypeVar

from medlink.errors import MedlinkError

T = TypeVar("T")
_HEADER = struct.Struct("!Q")  # the length of the pickle that follows
_GREETING = b"\x00medlink-worker-1\x00"  # a worker's first bytes on its answer channel
_MOST_BEFORE_GREETING = 1 << 20  # bytes a starting interpreter may print before the greeting (sitecustomize…)
_LARGEST = 1 << 40  # a length beyond this is no length of ours: the channel is corrupt
_WORKER = "from medlink.processes import serve; serve()"


class WorkerProcessError(MedlinkError):
    """A worker process died, or answered something that is not an answer."""


class WorkerStartError(WorkerProcessError):
    """No worker process could be started (no interpreter to run: an embedded Python)."""


class WorkerAnswerError(MedlinkError):
    """A call failed in a worker in a way that could not travel back as it was (an exception or a result that
    does not pickle): the worker itself is fine."""


class WorkerProcess:
    """One worker subprocess, started (and greeted) when made. :meth:`call` runs a function in it; one call at a
    time. :meth:`kill` stops it at once, whatever it is doing: a thread waiting in :meth:`call` then gets a
    :class:`WorkerProcessError`. ``environment``: the worker's whole environment (default:
    :func:`worker_environment`)."""

    def __init__(self, environment: Mapping[str, str] | None = None) -> None:
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-P", "-c", _WORKER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=dict(environment) if environment is not None else worker_environment(),
            )
        except OSError as error:
            raise WorkerStartError(f"cannot start a worker process with {sys.executable} ({error})") from None
        assert self._process.stdout is not None
        try:
            _await_greeting(self._process.stdout)
        except (EOFError, WorkerProcessError) as problem:
            code = _end(self._process)
            why = problem if isinstance(problem, WorkerProcessError) else f"it ended at start (exit code {code})"
            raise WorkerStartError(f"a worker process with {sys.executable} did not start: {why}") from None
        self.broken = False  # it died or its channel is garbled: no more calls

    @property
    def pid(self) -> int:
        return self._process.pid

    def call(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in the worker; its exception is raised here."""
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        if self.broken:
            raise WorkerProcessError("this worker process has ended")
        try:
            _write(process.stdin, (function, args))
            ok, value = _read(process.stdout)
        except (EOFError, BrokenPipeError, OSError, WorkerProcessError) as problem:
            self.broken = True
            code = _end(process)
            what = f"while running {getattr(function, '__qualname__', function)}"
            if isinstance(problem, WorkerProcessError):
                raise WorkerProcessError(f"{problem} {what}") from None
            raise WorkerProcessError(f"a worker process ended unexpectedly (exit code {code}) {what}") from None
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def kill(self) -> None:
        """End it now (a thread waiting on its answer reads the end of its output and returns)."""
        self.broken = True
        self._process.kill()

    def close(self, wait: float = 5) -> None:
        """Tell it to stop (its input closes); kill it if it has not within ``wait`` seconds."""
        _close_quietly(self._process.stdin)
        try:
            self._process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        _close_quietly(self._process.stdout)


class WorkerProcesses:
    """Up to ``workers`` subprocesses, started on first use. ``env`` is added to each worker's environment (for
    example ``OMP_NUM_THREADS=1`` where the workers share the cores).

    :meth:`close` (or leaving the ``with`` block) lets the calls already submitted finish, then ends the workers;
    leaving the block on an exception (an error, Ctrl-C) kills them at once and cancels what is still queued."""

    def __init__(self, workers: int, env: Mapping[str, str] | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers
        self._env = worker_environment(env)  # now: the caller may change folder before a worker starts
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix="medlink-worker")
        self._local = threading.local()  # each thread's own worker process
        self._started: list[WorkerProcess] = []
        self._lock = threading.Lock()

    def submit(self, function: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``function(*args)`` in a worker; the future holds its result or the exception it raised."""
        return self._threads.submit(self._call, function, args)

    def map(self, function: Callable[..., T], *iterables: Iterable[Any], ahead: int | None = None) -> Iterator[T]:
        """``function`` over the items, results in order; at most ``ahead`` calls (default: two per worker) are
        sent before their results are taken, so a long input is not read all at once."""
        ahead = ahead or 2 * self.workers
        pending: deque[Future[T]] = deque()
        for args in zip(*iterables, strict=False):
            pending.append(self.submit(function, *args))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        for future in pending:
            yield future.result()

    def close(self, kill: bool = False) -> None:
        """End the workers once the submitted calls are done (each is told to stop: its input closes; killed if it
        has not within 5 s); with ``kill``, at once, cancelling what is still queued."""
        if kill:
            with self._lock:
                for worker in self._started:
                    worker.kill()
        self._threads.shutdown(wait=True, cancel_futures=kill)
        with self._lock:
            started, self._started = self._started, []
        for worker in started:
            worker.close()

    def __enter__(self) -> WorkerProcesses:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close(kill=error is not None)

    def _call(self, function: Callable[..., T], args: tuple[Any, ...]) -> T:
        worker: WorkerProcess | None = getattr(self._local, "worker", None)
        if worker is None or worker.broken:
            worker = self._local.worker = WorkerProcess(self._env)
            with self._lock:
                self._started.append(worker)
        return worker.call(function, *args)


def worker_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a worker, with ``env`` added and the caller's import path, as
    multiprocessing passes it, made absolute now (the caller may change folder before a worker starts): the
    functions sent are found where the caller found them."""
    path = os.pathsep.join(os.path.abspath(entry) for entry in sys.path if entry)
    return {**os.environ, "PYTHONPATH": path, **(env or {})}


def run_in_processes(
    function: Callable[..., T], items: Iterable[Any], workers: int, env: Mapping[str, str] | None = None
) -> list[T]:
    """``[function(item) for item in items]`` on ``workers`` worker processes, in order."""
    with WorkerProcesses(workers, env) as pool:
        return list(pool.map(function, items))


def _end(process: subprocess.Popen[bytes]) -> int:
    try:
        return process.wait(timeout=5)
    except subprocess.TimeoutExpired:  # its output closed or garbled, but it still runs: end it
        process.kill()
        return process.wait()


def _await_greeting(stream: IO[bytes]) -> None:
    """Read up to the worker's greeting, passing over what its interpreter printed while starting."""
    seen = b""
    while not seen.endswith(_GREETING):
        byte = stream.read(1)
        if not byte:
            raise EOFError
        seen = (seen + byte)[-_MOST_BEFORE_GREETING:]
        if len(seen) >= _MOST_BEFORE_GREETING:
            raise WorkerProcessError("it printed a megabyte before starting to work")


def _write(stream: IO[bytes], value: Any) -> None:
    _write_bytes(stream, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _write_bytes(stream: IO[bytes], data: bytes) -> None:
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    return pickle.loads(_read_bytes(stream))


def _read_bytes(stream: IO[bytes]) -> bytes:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(header)[0]
    if size > _LARGEST:
        raise WorkerProcessError(f"a worker answered a length of {size:,} bytes: its output is not medlink's")
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return data


def _close_quietly(stream: IO[bytes] | None) -> None:
    try:
        if stream is not None:
            stream.close()
    except OSError:
        pass


def serve() -> None:
    """A worker's loop: greet, then read a call and answer ``(True, result)`` or ``(False, exception)`` until the
    input ends. The protocol keeps private copies of standard input and output, so what the called code prints goes
    to standard error and nothing it reads can take a call's bytes."""
    _end_with_parent()
    calls = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    answers.write(_GREETING)
    answers.flush()
    while True:
        try:
            call = _read_bytes(calls)
        except EOFError:
            return
        try:  # unpickling is inside: a function the worker cannot import is the caller's error, not a crash
            function, args = pickle.loads(call)
            answer: tuple[bool, Any] = (True, function(*args))
        except Exception as error:  # handed to the caller, who raises it
            answer = (False, _picklable(error))
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # a result that cannot travel is reported, not a crash
            data = pickle.dumps((False, WorkerAnswerError(f"the result could not be sent back: {error}")))
        try:
            _write_bytes(answers, data)
        except OSError:  # the caller is gone (it stopped waiting, or ended): so is the reason to go on
            return


def _end_with_parent() -> None:
    """A worker whose caller died (killed, say) ends within a second, even in the middle of a call that would
    never end: an orphan would hold its memory and a core for good."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="medlink-parent-watch", daemon=True).start()


def _picklable(error: Exception) -> Exception:
    """``error`` when it survives pickling both ways, else its type and message as a :class:`WorkerProcessError`."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return WorkerAnswerError(f"{type(error).__name__}: {error}")
    return error
