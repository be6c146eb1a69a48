"""An index plus annotated training mentions (source D), kept beside the names index it copies.

Xu & Bethard's D and OD searches need the training mentions encoded. Rather than re-encode every name, the names
index is copied and only the mentions are encoded into the copy; the copy is named by the digest of the original's
manifest and of the mentions, so a later run with the same index and training corpus reuses it.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path

from medlink.encoders.base import Encoder
from medlink.folders import cached_entry, staged_folder
from medlink.index.entries import IndexEntry
from medlink.index.update import add_entries
from medlink.index.vector_index import MANIFEST


def entries_digest(entries: Sequence[IndexEntry]) -> str:
    """A short digest of what the entries say (text key, concepts, whether it claims them all), in their order."""
    text = "\n".join(f"{e.key}\t{'|'.join(e.concepts)}" + ("\tseveral" if e.several else "") for e in entries)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def with_mentions_path(names: Path, entries: Sequence[IndexEntry], cache: Path) -> Path:
    """Where the copy of ``names`` plus ``entries`` lives under ``cache``."""
    manifest = hashlib.sha256((names / MANIFEST).read_bytes()).hexdigest()[:12]
    return cache / f"{names.name}-{manifest}-D-{entries_digest(entries)}"


def index_with_mentions(names: Path, entries: Sequence[IndexEntry], encoder: Encoder, target: Path) -> Path:
    """``target``: a copy of the index at ``names`` with ``entries`` added, built once (only they are encoded), and
    by one process when several ask at once (:func:`~medlink.folders.cached_entry`)."""

    def build(folder: Path) -> None:
        with staged_folder(folder, MANIFEST, "a medlink index") as staging:
            shutil.copytree(names, staging, dirs_exist_ok=True)
            add_entries(staging, entries, encoder)

    return cached_entry(target, lambda folder: (folder / MANIFEST).exists(), build)
