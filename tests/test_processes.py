"""medlink's worker processes (medlink/processes.py): results in order, errors carried back, a dead worker named —
and, what they exist for, a caller's script without a ``__main__`` guard (a file, or code read from standard input)
is never run again by them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from medlink.errors import MedlinkError
from medlink.processes import WorkerAnswerError, WorkerProcessError, WorkerProcesses, run_in_processes


def square(value: int) -> int:
    print("noise on standard output must not break the protocol")  # the worker's stdout is not its channel
    return value * value


def fail(value: int) -> int:
    raise MedlinkError(f"bad value {value}")


def die(value: int) -> int:
    os._exit(3)


def pid(_: int) -> int:
    return os.getpid()


def setting(name: str) -> str | None:
    return os.environ.get(name)


def test_results_come_back_in_order() -> None:
    assert run_in_processes(square, range(40), workers=2) == [value * value for value in range(40)]


def test_the_workers_are_other_processes_and_reused() -> None:
    with WorkerProcesses(2) as pool:
        pids = set(pool.map(pid, range(20)))
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def test_an_error_in_a_worker_is_raised_in_the_caller() -> None:
    with WorkerProcesses(2) as pool, pytest.raises(MedlinkError, match="bad value 7"):
        pool.submit(fail, 7).result()


def test_a_worker_that_dies_is_named_and_the_next_call_gets_a_fresh_one() -> None:
    with WorkerProcesses(1) as pool:
        with pytest.raises(WorkerProcessError, match="exit code 3"):
            pool.submit(die, 0).result()
        assert pool.submit(square, 3).result() == 9


def test_environment_reaches_the_workers() -> None:
    with WorkerProcesses(1, env={"MEDLINK_TEST_VALUE": "42"}) as pool:
        assert pool.submit(setting, "MEDLINK_TEST_VALUE").result() == "42"


class Unpicklable(Exception):
    def __init__(self, *, problem: str) -> None:  # keyword-only: pickles, but does not unpickle
        super().__init__(problem)


def raise_unpicklable(_: int) -> int:
    raise Unpicklable(problem="nobody can rebuild me")


def unsendable(_: int) -> object:
    return lambda: None


def slow(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


def test_errors_and_results_that_cannot_travel_are_reported_not_crashes() -> None:
    with WorkerProcesses(1) as pool:
        with pytest.raises(WorkerAnswerError, match="Unpicklable: nobody can rebuild me"):
            pool.submit(raise_unpicklable, 0).result()
        with pytest.raises(WorkerAnswerError, match="could not be sent back"):
            pool.submit(unsendable, 0).result()
        assert pool.submit(square, 4).result() == 16  # the same worker goes on


def test_leaving_on_an_exception_kills_the_workers_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), WorkerProcesses(2) as pool:
        pool.submit(slow, 30)
        pool.submit(slow, 30)
        time.sleep(1)
        raise KeyboardInterrupt
    assert time.monotonic() - started < 15


def test_a_clean_close_lets_submitted_calls_finish() -> None:
    with WorkerProcesses(1) as pool:
        futures = [pool.submit(slow, 0.2) for _ in range(3)]
    assert [future.result() for future in futures] == [0.2] * 3


def test_what_the_interpreter_prints_at_start_does_not_garble_the_answers(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text("print('hello from sitecustomize')\n")
    with WorkerProcesses(1, env={"PYTHONPATH": str(tmp_path)}) as pool:  # its sitecustomize runs at start
        assert pool.submit(abs, -5).result() == 5


# A script as a user writes it: top-level code, no ``if __name__ == "__main__"``. Under multiprocessing's spawn, every
# child re-ran it (a hang on the cache lock, or BrokenProcessPool from standard input). Run from a folder holding a
# ``typing.py`` (the script lives elsewhere): the workers must not import it in place of the standard library's, as the
# caller does not.
UNGUARDED = textwrap.dedent("""
    import sys
    from medlink.text.normalize import Normalizer
    print("script started", file=sys.stderr)
    keys = Normalizer().normalize_all(["Heart Attacks", "Infarction, Myocardial"] * 30, workers=2, chunk=10)
    print(keys[0], "|", keys[1], "|", len(keys))
""")


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_an_unguarded_script_runs_once_and_answers(tmp_path: Path, how: str) -> None:
    script = tmp_path / "scripts" / "user_script.py"
    script.parent.mkdir()
    script.write_text(UNGUARDED)
    if how == "file":  # code read from standard input has the current folder on its path, as Python gives it
        (tmp_path / "typing.py").write_text("raise SystemExit('the typing.py of the current folder was imported')\n")
    command = [sys.executable, str(script)] if how == "file" else [sys.executable, "-"]
    done = subprocess.run(
        command, input=None if how == "file" else UNGUARDED, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "heart attack | myocardial infarction | 60"
    assert done.stderr.count("script started") == 1  # the workers never ran the caller's script


def test_a_worker_ends_when_its_caller_is_killed_even_mid_call(tmp_path: Path) -> None:
    caller = tmp_path / "caller.py"
    caller.write_text(
        textwrap.dedent(
            """
            import sys, time
            from medlink.processes import WorkerProcess
            worker = WorkerProcess()
            print(worker.pid, flush=True)
            worker.call(time.sleep, 3600)  # never answers: the caller is killed meanwhile
            """
        )
    )
    parent = subprocess.Popen([sys.executable, str(caller)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    worker_pid = int(parent.stdout.readline())
    time.sleep(0.5)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{worker_pid}").exists() and _state(worker_pid) != "Z":
        assert time.monotonic() < deadline, "the orphaned worker is still running"
        time.sleep(0.1)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
