"""String key → rows, as two arrays that can live on disk: sorted 64-bit key hashes and the row each hash came from.

A compiled terminology keeps one for normalized names (→ name rows) and one for concept ids and alternative ids
(→ concept rows), searched on disk (:class:`~medlink.terminology.point_reads.FileKeyTable`): pages the operating
system shares between processes, and loading costs nothing however large the terminology: no Python object per key
is ever made. The
hash (:func:`key_hash`) is stable across processes and versions, unlike ``hash()``; callers confirm a hit against
the stored key.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

KEY_HASH = "crc32-adler32"  # recorded in a compiled terminology's manifest: another hash cannot read its tables


def key_hash(key: str) -> int:
    """CRC-32 and Adler-32 of the UTF-8 bytes side by side: stable, and four times cheaper than a cryptographic
    hash over 12 M keys; a collision costs a comparison, never a wrong answer."""
    data = key.encode("utf-8")
    return (zlib.crc32(data) << 32) | zlib.adler32(data)


def sorted_holds(hashes: np.ndarray, key: str) -> bool:
    """Whether the sorted ``hashes`` hold ``key``'s."""
    value = np.uint64(key_hash(key))
    at = int(hashes.searchsorted(value))
    return at < len(hashes) and bool(hashes[at] == value)


def row_dtype(largest: int) -> type[np.signedinteger]:
    """int32 rows while they fit (half the bytes to map), else int64."""
    return np.int32 if largest < np.iinfo(np.int32).max else np.int64


@dataclass(frozen=True)
class KeyTable:
    """``hashes`` sorted ascending; ``rows[i]`` is the row whose key hashed to ``hashes[i]``."""

    hashes: np.ndarray
    rows: np.ndarray

    @classmethod
    def build(cls, keys: Sequence[str], rows: np.ndarray) -> KeyTable:
        """From keys and the row each belongs to; rows sharing a hash keep the order they came in."""
        hashes = np.fromiter(map(key_hash, keys), dtype=np.uint64, count=len(keys))
        order = np.argsort(hashes, kind="stable")
        rows = np.asarray(rows)
        return cls(hashes[order], rows.astype(row_dtype(int(rows.max(initial=0))))[order])

    def candidates(self, key: str) -> np.ndarray:
        """Rows whose key hashes like ``key`` (confirm against the key itself), in the order they were added."""
        value = np.uint64(key_hash(key))
        start = int(np.searchsorted(self.hashes, value, side="left"))
        end = int(np.searchsorted(self.hashes, value, side="right"))
        return self.rows[start:end]

    def may_hold(self, key: str) -> bool:
        """False where no key hashes like ``key`` (as :meth:`FileKeyTable.may_hold`)."""
        return sorted_holds(self.hashes, key)

    def __len__(self) -> int:
        return len(self.hashes)

    def save(self, folder: Path, stem: str) -> tuple[Path, Path]:
        paths = folder / f"{stem}.hashes.npy", folder / f"{stem}.rows.npy"
        np.save(paths[0], self.hashes)
        np.save(paths[1], self.rows)
        return paths
