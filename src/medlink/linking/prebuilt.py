"""The embedded default, prebuilt: what its first use would otherwise build on the user's machine.

The ``medlink-default-index`` distribution (built from ``packages/medlink-default-index/`` by
scripts/build_default_index_package.py, installed with medlink) holds the default's index — the MeSH descriptors
encoded by the default encoder, with the shipped nil and form calibration — and the compiled MeSH of descriptors and
supplementary records. Without it the first ``medlink link`` encodes 115,933 names (three minutes on 2 cores) and
compiles 323k records (about 40 s); with it, it opens them where they are installed.

A prebuilt part is taken only when it was made from exactly what this medlink holds: the index for this encoder's
fingerprint, this terminology's fingerprint and the calibration shipped today; the compiled store under the cache
name that names the descriptors' fingerprint and the supplementary file's checksum. Anything else (an installed
``terminology update``, a retrained encoder, a package of another release) is built into the cache as before.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

MODULE, DATA = "medlink_default_index", "data"  # the distribution's module and its data folder (what its
# `medlink.models` entry point, "default-index" in `medlink models`, returns)
# each part in a folder named as in the cache (indexes/<terminology>-<encoder>, terminologies/<cache name>): what
# a release ships is found by what it was built from, and files of another release never stand in its place
INDEXES, TERMINOLOGIES = "indexes", "terminologies"
NO_PREBUILT = "MEDLINK_NO_PREBUILT"


def prebuilt_root() -> Path | None:
    """The installed prebuilt folder, or ``None`` when the distribution is not installed or ``MEDLINK_NO_PREBUILT``
    is set to anything but 0 (to build everything from the sources, as the package's own build does). Found by
    module name, without importing it: reading every distribution's entry points, as ``medlink models`` does, costs
    0.1 s a call."""
    if os.environ.get(NO_PREBUILT, "0") not in ("", "0"):
        return None
    spec = importlib.util.find_spec(MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / DATA
    return folder if folder.is_dir() else None


def prebuilt_terminology(name: str) -> Path | None:
    """Where the package holds the compiled terminology cached under ``name``, when it holds one (the caller checks
    that this medlink reads it, as it checks its cache entry)."""
    root = prebuilt_root()
    folder = root / TERMINOLOGIES / name if root else None
    return folder if folder is not None and folder.is_dir() else None


def prebuilt_index(terminology: str, encoder: str, expected: dict[str, Any]) -> Path | None:
    """The prebuilt index when it was built with ``encoder`` over ``terminology`` (fingerprints) and its manifest
    holds every value of ``expected`` (the shipped calibration), else ``None``."""
    from medlink.index.vector_index import IndexFileError, read_index_manifest

    root = prebuilt_root()
    if root is None:
        return None
    folder = root / INDEXES / prebuilt_index_name(terminology, encoder)
    try:
        manifest = read_index_manifest(folder)
    except IndexFileError:  # missing, or of another index format version: built into the cache instead
        return None
    built_as_wanted = manifest.terminology == terminology and manifest.encoder_fingerprint == encoder
    # the shipped calibration's fields, compared as written
    calibrated_as_shipped = all(manifest.written.get(key) == value for key, value in expected.items())
    return folder if built_as_wanted and calibrated_as_shipped else None


def prebuilt_index_name(terminology: str, encoder: str) -> str:
    """The folder a prebuilt index over ``terminology`` by ``encoder`` (fingerprints) is shipped in."""
    return f"{terminology}-{encoder}"
