"""Folders medlink writes: readable as the umask says, and what a killed process left beside them cleaned up."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from medlink.folders import STALE_AFTER_SECONDS, staged_folder


def _dead_pid() -> int:
    """A process id no process has now."""
    for pid in range(4_194_303, 1, -1):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            continue
    raise AssertionError("every process id is taken")


def test_a_staged_folder_follows_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        with staged_folder(tmp_path / "index", "manifest.json", "an index") as staging:
            (staging / "manifest.json").write_text("{}")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "index").stat().st_mode) == 0o755  # mkdtemp alone would leave 0700


def test_what_a_killed_process_left_is_removed_and_nothing_live(tmp_path: Path) -> None:
    old = time.time() - STALE_AFTER_SECONDS - 60
    left = {
        f".index.staging-{_dead_pid()}-abc": old,  # a dead process's, long untouched: removed
        f".index.old-{_dead_pid()}": old,  # likewise
        f".index.staging-{_dead_pid()}-new": time.time(),  # recent: maybe another machine's live build, kept
        f".index.staging-{os.getpid()}-mine": old,  # a live process's: kept
        f".other.staging-{_dead_pid()}-abc": old,  # another target's: not this call's business
    }
    for name, mtime in left.items():
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (mtime, mtime))
    with staged_folder(tmp_path / "index", "manifest.json", "an index") as staging:
        (staging / "manifest.json").write_text("{}")
    remaining = sorted(p.name for p in tmp_path.iterdir())
    assert remaining == sorted(
        [
            "index",
            f".index.staging-{_dead_pid()}-new",
            f".index.staging-{os.getpid()}-mine",
            f".other.staging-{_dead_pid()}-abc",
        ]
    )
