"""medlink's worker processes (medlink/processes.py): results in order, errors carried back, a dead worker named —
and, what they exist for, a caller's script without a ``__main__`` guard (a file, or code read from standard input)
is never run again by them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from medlink.errors import MedlinkError
from medlink.processes import WorkerProcessError, WorkerProcesses, run_in_processes


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


# A script as a user writes it: top-level code, no ``if __name__ == "__main__"``. Under multiprocessing's spawn, every
# child re-ran it (a hang on the cache lock, or BrokenProcessPool from standard input).
UNGUARDED = textwrap.dedent("""
    import sys
    from medlink.text.normalize import Normalizer
    print("script started", file=sys.stderr)
    keys = Normalizer().normalize_all(["Heart Attacks", "Infarction, Myocardial"] * 30, workers=2, chunk=10)
    print(keys[0], "|", keys[1], "|", len(keys))
""")


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_an_unguarded_script_runs_once_and_answers(tmp_path: Path, how: str) -> None:
    script = tmp_path / "user_script.py"
    script.write_text(UNGUARDED)
    command = [sys.executable, str(script)] if how == "file" else [sys.executable, "-"]
    done = subprocess.run(command, input=None if how == "file" else UNGUARDED, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "heart attack | myocardial infarction | 60"
    assert done.stderr.count("script started") == 1  # the workers never ran the caller's script
