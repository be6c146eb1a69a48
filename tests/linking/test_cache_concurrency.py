"""Several processes asking for the same cache entry at once: one builds it, the others wait and use it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LOCKED = """
import os, sys, time
from pathlib import Path
from medlink.folders import building_lock
log = Path(sys.argv[1])
with building_lock(log.parent / "entry"):
    with log.open("a") as out:
        out.write(f"start {os.getpid()}\\n")
    time.sleep(0.4)
    with log.open("a") as out:
        out.write(f"end {os.getpid()}\\n")
"""

EXPORT = """
import json
from medlink.encoders import load_encoder
print(json.dumps(load_encoder("minilm").encode(["heart attack"])[0][:8].tolist()))
"""


def _start(code: str, *args: str, cache: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MEDLINK_CACHE": str(cache)},
    )


def test_building_lock_lets_one_process_in_at_a_time(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    processes = [_start(LOCKED, str(log), cache=tmp_path) for _ in range(3)]
    for process in processes:
        assert process.wait(timeout=60) == 0, process.stderr.read()
    lines = [line.split() for line in log.read_text().splitlines()]
    assert len(lines) == 6
    for start, end in zip(lines[::2], lines[1::2], strict=True):
        assert start[0] == "start" and end == ["end", start[1]]  # nobody entered while another was inside


def test_two_processes_exporting_the_same_encoder_both_succeed(tmp_path: Path) -> None:
    processes = [_start(EXPORT, cache=tmp_path) for _ in range(2)]
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        outputs.append(json.loads(out))
    assert outputs[0] == outputs[1]
    exported = [path.name for path in (tmp_path / "encoders").iterdir() if not path.name.startswith(".")]
    assert len(exported) == 1  # one export, used by both
    leftovers = [path.name for path in (tmp_path / "encoders").iterdir() if path.is_dir() and path.name.startswith(".")]
    assert leftovers == []


def test_a_cache_entry_of_another_version_is_rebuilt_not_used(tmp_path: Path) -> None:
    from medlink.folders import cached_entry, replace_folder
    from medlink.index.vector_index import INDEX_FORMAT, INDEX_VERSION, MANIFEST, READ_VERSIONS, is_current_index

    entry = tmp_path / "indexes" / "entry"
    builds: list[int] = []

    def build(folder: Path) -> None:  # as medlink builds: a staging folder, then one rename
        staging = folder.with_name(f".{folder.name}.building")
        staging.mkdir(parents=True)
        identity = {"kind": "onnx", "model": "m", "weights_sha256": "0", "pooling": "mean", "max_length": 32}
        written = {"encoder": {**identity, "dimension": 4}, "encoder_fingerprint": "f", "terminology": "t"}
        manifest = {"format": INDEX_FORMAT, "version": INDEX_VERSION, **written, "files": {}}
        (staging / MANIFEST).write_text(json.dumps(manifest))
        replace_folder(staging, folder, MANIFEST, "a medlink index")
        builds.append(1)

    entry.mkdir(parents=True)
    (entry / MANIFEST).write_text(json.dumps({"format": INDEX_FORMAT, "version": min(READ_VERSIONS) - 1}))  # older
    assert not is_current_index(entry)
    assert cached_entry(entry, is_current_index, build) == entry and builds == [1]
    assert is_current_index(entry)
    cached_entry(entry, is_current_index, build)
    assert builds == [1]  # a current entry is used as it is
