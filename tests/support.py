"""Test helpers: paths to fixtures and to the real data in ../shared (tests skip cleanly without it)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
TRIALS = FIXTURES / "trials"
XML_RECORDS = [TRIALS / "NCT90000001.xml", TRIALS / "NCT90000002.xml"]
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file(relative: str) -> Path:
    """A file under ../shared/data, or a skip when this checkout has no shared data beside it."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"real data not available: {path}")
    return path


def write_archive(path: Path, members: dict[str, bytes]) -> Path:
    """A .zip (by its suffix) or .tar.gz archive of ``members`` (name → bytes) at ``path``."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in members.items():
                archive.writestr(name, data)
    else:
        with tarfile.open(path, "w:gz") as archive:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return path
