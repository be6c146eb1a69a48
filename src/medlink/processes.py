"""Worker processes that never re-import the caller's script.

``multiprocessing``'s spawn and forkserver start methods prepare each child by importing the parent's ``__main__``
again: a user's script with top-level ``medlink.link(...)`` and no ``if __name__ == "__main__"`` guard then runs
once more in every child, which waits on the cache lock its parent holds (a hang), and code read from standard
input cannot be re-imported at all (``BrokenProcessPool``). Forking is no way out either: ONNX Runtime's, torch's
and Arrow's threads do not survive it.

So medlink's workers are plain subprocesses running this module (``python -m medlink.processes``), fed pickled
calls over their standard input and answering over a private copy of their standard output. The caller's
``__main__`` is never touched, from a script, a notebook, standard input or ``python -c``. A thread per worker
does the waiting, so :class:`WorkerProcesses` is used like ``concurrent.futures``' executors. Only module-level
functions and picklable arguments travel, as with any process pool.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import IO, Any, TypeVar

from medlink.errors import MedlinkError

T = TypeVar("T")
_HEADER = struct.Struct("!Q")  # the length of the pickle that follows


class WorkerProcessError(MedlinkError):
    """A worker process died or could not be started."""


class WorkerProcesses:
    """Up to ``workers`` subprocesses (``python -m medlink.processes``), started on first use and ended on
    :meth:`close` (or leaving the ``with`` block). ``env`` is added to each worker's environment (for example
    ``OMP_NUM_THREADS=1`` where the workers share the cores)."""

    def __init__(self, workers: int, env: Mapping[str, str] | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers
        # The caller's import path, as multiprocessing passes it: the functions sent are found where the caller
        # found them (a module beside its script, a source checkout put on sys.path).
        path = os.pathsep.join(entry for entry in sys.path if entry)
        self._env = {**os.environ, "PYTHONPATH": path, **(env or {})}
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix="medlink-worker")
        self._local = threading.local()  # each thread's own worker process
        self._started: list[subprocess.Popen[bytes]] = []
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

    def close(self) -> None:
        """End the workers: each is told to stop (its input closes) and killed if it has not within 5 s."""
        self._threads.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            started, self._started = self._started, []
        for process in started:
            _close_quietly(process.stdin)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            _close_quietly(process.stdout)

    def __enter__(self) -> WorkerProcesses:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:  # fmt: skip
        self.close()

    def _call(self, function: Callable[..., T], args: tuple[Any, ...]) -> T:
        process = getattr(self._local, "process", None)
        if process is None:
            process = self._local.process = self._start()
        assert process.stdin is not None and process.stdout is not None
        try:
            _write(process.stdin, (function, args))
            ok, value = _read(process.stdout)
        except (EOFError, BrokenPipeError, OSError):
            self._local.process = None
            try:
                code = process.wait(timeout=5)
            except subprocess.TimeoutExpired:  # its output closed but it still runs: end it
                process.kill()
                code = process.wait()
            raise WorkerProcessError(f"a worker process ended unexpectedly (exit code {code}) while running "
                                     f"{getattr(function, '__qualname__', function)}") from None  # fmt: skip
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            process = subprocess.Popen([sys.executable, "-m", "medlink.processes"], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, env=self._env)  # fmt: skip
        except OSError as error:
            raise WorkerProcessError(f"cannot start a worker process with {sys.executable} ({error})") from None
        with self._lock:
            self._started.append(process)
        return process


def run_in_processes(function: Callable[..., T], items: Iterable[Any], workers: int,
                     env: Mapping[str, str] | None = None) -> list[T]:  # fmt: skip
    """``[function(item) for item in items]`` on ``workers`` worker processes, in order."""
    with WorkerProcesses(workers, env) as pool:
        return list(pool.map(function, items))


def _write(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
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


def _serve() -> None:
    """A worker's loop: read a call, answer ``(True, result)`` or ``(False, exception)``, until the input ends.
    The protocol keeps private copies of standard input and output, so what the called code prints goes to
    standard error and nothing it reads can take a call's bytes."""
    calls = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
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
        _write(answers, answer)


def _picklable(error: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:  # an exception that does not survive pickling travels as its message
        return WorkerProcessError(f"{type(error).__name__}: {error}")
    return error


if __name__ == "__main__":
    _serve()
