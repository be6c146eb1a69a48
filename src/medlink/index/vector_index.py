"""A saved vector index: a folder that links encoded names back to concepts.

``INDEX/manifest.json``    format and version, medlink version, encoder identity, terminology fingerprint, kind and
                           parameters per source, counts, checksum of every file (read into an
                           :class:`~medlink.index.manifest.IndexManifest`)
``INDEX/entries.arrow``    one row per encoded text (:mod:`medlink.index.entry_table`; ``entries.parquet`` in
                           indexes built before)
``INDEX/O.faiss``, ``D.faiss``  one FAISS index per source, rows in entry order within the source

An index refuses to load when its files do not match their checksums, and refuses to be searched with another
encoder or against another terminology than it was built from.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medlink.encoders.base import EncoderIdentity, l2_normalize
from medlink.folders import contained_file, read_manifest_json, verify_checksums
from medlink.index import faiss_backend
from medlink.index.compressed import SCALAR, SCALAR_CODES, scalar_quantizer
from medlink.index.entries import SOURCES, IndexEntry
from medlink.index.entry_table import EntryTable, entries_file, read_entries
from medlink.index.manifest import MANIFEST, IndexFileError, IndexManifest
from medlink.index.rescored import Rescored, row_reader
from medlink.version import __version__

INDEX_FORMAT = "medlink-index"
INDEX_VERSION = 2  # 2: entries in mapped Arrow (entries.arrow), compressed codes named; 1: Parquet entries
READ_VERSIONS = (1, 2)


@dataclass(frozen=True)
class Hit:
    """A dense match: an index entry and its cosine similarity to the query."""

    entry: IndexEntry
    score: float


def faiss_file(source: str) -> str:
    return f"{source}.faiss"


def is_vector_file(name: str) -> bool:
    """FAISS files and the rows a compressed index re-scores from (``pq``'s int8 vectors, ``sq4``'s residuals):
    checksummed at build, checked when first searched (the rows by their shape: hashing gigabytes would make every
    load slow)."""
    return name.endswith((".faiss", ".int8.npy", ".residual.npy"))


def _check_quantizer(index: Any, codes: str, path: Path) -> None:
    """A compressed source's graph holds the codes its manifest names: an 8-bit graph searched as 4-bit codes with
    residuals, or the reverse, would answer with wrong scores rather than fail."""
    import faiss

    if codes not in SCALAR_CODES:
        return
    storage: Any = faiss.downcast_index(index.storage) if hasattr(index, "storage") else None
    if not hasattr(storage, "sq") or storage.sq.qtype != scalar_quantizer(codes):
        raise IndexFileError(f"{path} does not hold the {codes} codes its manifest names; rebuild the index")


class FaissFiles(dict[str, Any]):
    """Each source's FAISS index, read from ``SOURCE.faiss`` on first use: its file checked against the manifest's
    checksum (when ``checksums`` are given) and its vectors counted against the source's entries."""

    def __init__(
        self,
        folder: Path,
        counts: Mapping[str, int],
        checksums: Mapping[str, str] | None,
        ef_search: int | None,
        manifest: IndexManifest,
    ) -> None:
        super().__init__()
        self.folder, self.counts, self.checksums, self.ef_search = folder, counts, checksums, ef_search
        self.kinds, self.compressed = dict(manifest.kinds), manifest.compressed
        self.quick_checks = manifest.quick_checks
        self._lock = threading.Lock()

    def __missing__(self, source: str) -> Any:
        with self._lock:
            if source in self:  # read by another thread meanwhile
                return self[source]
            name = faiss_file(source)
            if self.checksums is not None:
                verify_checksums(
                    self.folder, {name: self.checksums.get(name, "")}, IndexFileError, "index", self.quick_checks
                )
            compressed = self.kinds.get(source) == "compressed"
            try:
                index = faiss_backend.read_faiss(self.folder / name, self.ef_search)
            except RuntimeError as error:  # FAISS's own checks of what it reads
                raise IndexFileError(f"{self.folder / name} cannot be read ({error}); rebuild the index") from None
            if compressed:
                _check_quantizer(index, self.compressed.codes, self.folder / name)
            if compressed and self.compressed.codes == SCALAR:
                index.hnsw.efSearch = self.ef_search or self.compressed.ef_search  # the manifest's, or the caller's
            elif compressed:
                codes, ef_search = self.compressed.codes, self.ef_search or self.compressed.ef_search
                try:
                    rows = row_reader(index, self.folder, source, codes)
                except (OSError, ValueError, EOFError) as error:
                    raise IndexFileError(
                        f"{self.folder}: the rows {name}'s {codes} codes are re-scored from cannot be read: {error}; "
                        "rebuild the index"
                    ) from None
                index = Rescored(index, rows, self.compressed.rescore, ef_search)
            if index.ntotal != self.counts.get(source, 0):
                raise IndexFileError(
                    f"{self.folder / name} has {index.ntotal} vectors for "
                    f"{self.counts.get(source, 0)} entries; rebuild the index"
                )
            self[source] = index
            return index


@dataclass
class VectorIndex:
    """Entries and their FAISS indexes, per source."""

    entries: dict[str, EntryTable]  # source -> rows, in FAISS order
    faiss: dict[str, Any]
    manifest: IndexManifest  # and where it was read from: what the manifest names is looked for beside it
    _centroids: dict[tuple[str, ...], tuple[list[str], Any]] = field(default_factory=dict, repr=False)

    # --- loading --------------------------------------------------------------------------------------------

    @classmethod
    def load(cls, folder: Path | str, verify: bool = True, ef_search: int | None = None) -> VectorIndex:
        """Open the index in ``folder``: its manifest and entries now, each source's FAISS index (checked against its
        checksum and its entry count) on its first search, so a linker that decides by exact match never reads
        them."""
        folder = Path(folder)
        manifest = read_index_manifest(folder)
        files = manifest.files
        for name in files:
            if not contained_file(folder, name, IndexFileError, "index").exists():
                raise IndexFileError(f"{folder / name} is missing: the index is incomplete; rebuild it")
        if verify:  # the vector files are checked when first searched (a linker deciding by exact match never is)
            unmapped = {name: sha for name, sha in files.items() if not is_vector_file(name)}
            verify_checksums(folder, unmapped, IndexFileError, "index", manifest.quick_checks)
        entries = read_entries(entries_file(folder, files))
        indexes = FaissFiles(
            folder,
            {source: len(rows) for source, rows in entries.items()},
            files if verify else None,
            ef_search,
            manifest,
        )
        return cls(entries, indexes, manifest)

    @property
    def encoder(self) -> EncoderIdentity:
        return self.manifest.encoder

    @property
    def terminology_fingerprint(self) -> str:
        return self.manifest.terminology

    def check_compatible(
        self, encoder: EncoderIdentity | None = None, terminology_fingerprint: str | None = None
    ) -> None:
        """Refuse an encoder or terminology other than the ones this index was built with."""
        if encoder is not None and encoder.fingerprint() != self.encoder.fingerprint():
            raise IndexFileError(
                f"this index was built with encoder {self.encoder.model} ({self.encoder.kind}, "
                f"{self.encoder.fingerprint()}) but the linker uses {encoder.model} ({encoder.kind}, "
                f"{encoder.fingerprint()}); rebuild it with `medlink index build`"
            )
        if terminology_fingerprint is not None and terminology_fingerprint != self.terminology_fingerprint:
            raise IndexFileError(
                f"this index was built from terminology {self.terminology_fingerprint}, not from the loaded "
                f"terminology {terminology_fingerprint}; rebuild it with `medlink index build`"
            )

    # --- searching ------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return sum(len(rows) for rows in self.entries.values())

    def count(self, source: str) -> int:
        return len(self.entries.get(source, ()))

    def search(self, queries: np.ndarray, k: int, sources: Sequence[str] = SOURCES) -> list[list[Hit]]:
        """Top ``k`` entries per query over the given sources (per-name "T" representation), best first."""
        results: list[list[Hit]] = [[] for _ in range(len(queries))]
        for source in sources:
            if not self.count(source):
                continue
            scores, rows = faiss_backend.search(self.faiss[source], queries, k)
            found = rows >= 0
            # One columnar read for the whole batch: reading rows one by one cost ~3 % of linking time.
            entries = iter(self.entries[source].take(rows[found].tolist()))
            for query, (row_scores, row_found) in enumerate(zip(scores.tolist(), found.tolist(), strict=True)):
                results[query].extend(Hit(next(entries), s) for s, ok in zip(row_scores, row_found, strict=True) if ok)
        for hits in results:
            hits.sort(key=lambda hit: (-hit.score, hit.entry.source, hit.entry.key))
            del hits[k:]
        return results

    def search_centroids(
        self, queries: np.ndarray, k: int, sources: Sequence[str] = SOURCES
    ) -> list[list[tuple[str, float]]]:
        """Top ``k`` concepts per query by similarity to each concept's centroid ("C" representation)."""
        concept_ids, index = self._centroid_index(tuple(sorted(sources)))
        scores, rows = faiss_backend.search(index, queries, k)
        return [
            [(concept_ids[r], float(s)) for s, r in zip(rs, ids, strict=True) if r >= 0]
            for rs, ids in zip(scores, rows, strict=True)
        ]

    def _centroid_index(self, sources: tuple[str, ...]) -> tuple[list[str], Any]:
        """Mean of the unit vectors of every entry naming a concept, normalized; built on first use."""
        if sources not in self._centroids:
            sums: dict[str, np.ndarray] = {}
            for source in sources:
                if not self.count(source):
                    continue
                vectors = self.faiss[source].reconstruct_n(0, self.count(source))
                for entry, vector in zip(self.entries[source], vectors, strict=True):
                    for concept in entry.concepts:
                        if concept in sums:
                            sums[concept] += vector
                        else:
                            sums[concept] = vector.astype(np.float32).copy()
            concept_ids = sorted(sums)
            matrix = l2_normalize(np.stack([sums[c] for c in concept_ids])) if concept_ids else np.zeros((0, 1))
            kind = faiss_backend.choose_kind(len(concept_ids))
            self._centroids[sources] = (concept_ids, faiss_backend.build_faiss(matrix, kind, self.manifest.hnsw))
        return self._centroids[sources]


def read_index_manifest(folder: Path) -> IndexManifest:
    """The index's manifest in ``folder``, its format, version and every field checked."""
    path = Path(folder) / MANIFEST
    written = read_manifest_json(
        path, IndexFileError, f"{folder} is not a medlink index (no {MANIFEST}); build one with `medlink index build`"
    )
    if written.get("format") != INDEX_FORMAT:
        raise IndexFileError(f"{path}: not a medlink index manifest")
    if written.get("version") not in READ_VERSIONS:
        raise IndexFileError(
            f"{folder} is index format version {written.get('version')}; this medlink "
            f"({__version__}) reads versions {', '.join(map(str, READ_VERSIONS))}. Rebuild it with "
            "`medlink index build`"
        )
    return IndexManifest.of(written, path)


def is_current_index(folder: Path) -> bool:
    """Whether ``folder`` holds an index this medlink reads (a cache entry of another version is rebuilt)."""
    try:
        read_index_manifest(folder)
    except IndexFileError:
        return False
    return True
