"""Test helpers: paths to fixtures and to the real data in ../shared (tests skip cleanly without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file(relative: str) -> Path:
    """A file under ../shared/data, or a skip when this checkout has no shared data beside it."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"real data not available: {path}")
    return path
