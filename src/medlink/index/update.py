"""Changing an index that exists, each change staged and renamed into place: names added (only new texts are
encoded), manifest fields set (a calibrated nil threshold), and a copy bound to a larger terminology without
encoding anything."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from medlink.encoders.base import Encoder
from medlink.errors import MedlinkError
from medlink.folders import replace_folder, staged_folder, verify_checksums
from medlink.index import faiss_backend
from medlink.index.build import write_manifest
from medlink.index.compressed import SCALAR
from medlink.index.entries import IndexEntry
from medlink.index.entry_table import ENTRIES, write_entries
from medlink.index.rescored import rescoring_files
from medlink.index.vector_index import MANIFEST, IndexFileError, VectorIndex, faiss_file

# The manifest fields calibration (nil threshold, term and form models) and rebinding (the terminology the vectors
# were encoded for) add to an index.
KEPT_BY_ADD = (
    "nil_threshold",
    "calibration",
    "term_model",
    "form_model",
    "form_calibration",
    "updated_from",
    "rebound_from",
)


def update_manifest(folder: Path | str, **values: object) -> None:
    """Set manifest fields (e.g. a calibrated nil threshold), written to a temporary file and renamed."""
    path = Path(folder) / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest.update(values)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)


def rebind_index(
    source: Path | str,
    output: Path | str,
    terminology_fingerprint: str,
    holds: Callable[[str], bool],
    origin: dict[str, str],
) -> Path:
    """A copy of the index at ``source`` for another terminology that holds every concept the index names
    (``holds``), without encoding anything: MeSH descriptors + supplementary records searched through the vectors
    of a descriptor index. The other terminology's extra names are reached by exact match only. Refused, naming a
    concept, when the terminology lacks one; written to a staging folder and renamed."""
    source, output = Path(source), Path(output)
    index = VectorIndex.load(source)
    # every file checked before it is copied: a damaged source must not become a cache entry that outlives its repair
    verify_checksums(source, dict(index.manifest.files), IndexFileError, "index")
    for table in index.entries.values():
        for entry in table:
            missing = next((c for c in entry.concepts if not holds(c)), None)
            if missing is not None:
                raise MedlinkError(
                    f"{source} names {missing} ({entry.text!r}), which the terminology to rebind it "
                    f"to does not hold; build an index for that terminology instead"
                )
    with staged_folder(output, MANIFEST, "a medlink index") as staging:
        for path in source.iterdir():
            if path.is_file():
                shutil.copy2(path, staging / path.name)
        # a reranker fitted for the source index reads only the concepts its vectors name, so it still applies
        update_manifest(
            staging,
            terminology=terminology_fingerprint,
            origin=origin,
            rebound_from=index.manifest.rebound_from or index.manifest.terminology,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
    return output


def add_entries(folder: Path | str, new_entries: Sequence[IndexEntry], encoder: Encoder) -> dict[str, int]:
    """Add names (e.g. a domain synonym file) to an index, encoding only texts it does not have yet.

    An entry whose key is already in the same source gains the new concepts without being re-encoded. Returns
    counts of what was encoded and what was merged.
    """
    folder = Path(folder)
    index = VectorIndex.load(folder)
    index.check_compatible(encoder.identity)
    entries = {source: list(rows) for source, rows in index.entries.items()}
    position = {(e.source, e.key): i for rows in entries.values() for i, e in enumerate(rows)}
    to_encode: list[IndexEntry] = []
    merged = 0
    for entry in new_entries:
        found = position.get((entry.source, entry.key))
        if found is not None:
            old = entries[entry.source][found]
            concepts = tuple(dict.fromkeys([*old.concepts, *entry.concepts]))
            if concepts != old.concepts:
                entries[entry.source][found] = replace(old, concepts=concepts)
                merged += 1
            continue
        entry = replace(entry, added=True)
        position[(entry.source, entry.key)] = len(entries.setdefault(entry.source, []))
        entries[entry.source].append(entry)
        to_encode.append(entry)
    _check_addable(folder, index, {entry.source for entry in to_encode})
    vectors = encoder.encode([e.text for e in to_encode]) if to_encode else np.zeros((0, encoder.dimension))
    staging = folder.with_name(f".{folder.name}.updating")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    kinds, hnsw = dict(index.manifest.kinds), index.manifest.hnsw
    for source in entries:
        kinds.setdefault(source, "exact")
        new_rows = [i for i, e in enumerate(to_encode) if e.source == source]
        if index.count(source) and not new_rows:  # a source that gains no vector is copied as it is
            for name in (faiss_file(source), *rescoring_files(source)):
                if (folder / name).is_file():
                    shutil.copyfile(folder / name, staging / name)
            continue
        faiss_index = (
            faiss_backend.read_faiss(folder / faiss_file(source), mmap=False)
            if index.count(source)
            else faiss_backend.build_faiss(np.zeros((0, encoder.dimension), np.float32), "exact", hnsw)
        )
        if new_rows:  # an 8-bit compressed source adds its new vectors as codes of its trained quantizer
            faiss_index.add(np.ascontiguousarray(vectors[new_rows], dtype=np.float32))
        faiss_backend.write_faiss(faiss_index, staging / faiss_file(source))
    write_entries(entries, staging / ENTRIES)
    # what calibration and rebinding added stays: the added names change neither the encoder nor what it encoded for
    kept = {key: value for key, value in index.manifest.written.items() if key in KEPT_BY_ADD and value is not None}
    if "compressed" in kinds.values():
        kept["compressed"] = asdict(index.manifest.compressed)
    write_manifest(
        staging,
        encoder,
        index.terminology_fingerprint,
        kinds,
        hnsw,
        entries,
        dict(index.manifest.timing),
        index.manifest.origin.as_json(),
        kept,
    )
    replace_folder(staging, folder, MANIFEST, "a medlink index")
    return {"encoded": len(to_encode), "merged": merged}


def _check_addable(folder: Path, index: VectorIndex, sources: set[str]) -> None:
    """Names can go into any source but one compressed with codes re-scored from rows on disk (``pq``, ``sq4``),
    whose rows would need rewriting too: such a build is run again instead."""
    codes = index.manifest.compressed.codes
    for source in sources:
        if index.manifest.kinds.get(source) == "compressed" and codes != SCALAR:
            raise MedlinkError(
                f"{folder} is compressed with {codes} codes, which names cannot be added to: build it again with "
                f"the new names and --reuse {folder} (only the new names are encoded)"
            )
