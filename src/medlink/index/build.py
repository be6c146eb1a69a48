"""Building and updating vector indexes.

Building is where the time goes (encoding ~1,000+ names/s on 2 cores), so it is made safe to interrupt:

- the work happens in a staging folder next to the target, ``.NAME.building``, whose ``plan.json`` records what
  is being built (encoder, entries checksum, chunk size);
- vectors are written chunk by chunk (``chunks/00042.npy``, fp16, each renamed into place when complete);
- run the same build again and it resumes from the chunks already there, and a compressed index from the graph
  it had saved (filling the graph of 12 M names takes hours); a different plan (other encoder, other terminology)
  starts over cleanly;
- the finished folder replaces the target in one rename, so a crash never leaves a half index in its place.

:func:`add_entries` updates an index with new names or synonyms, encoding only texts it has not seen;
:func:`rebind_index` reuses an index's vectors for a larger terminology that holds every concept it names; and
``build_index(reuse=…)`` takes the vectors of texts that earlier indexes of the same encoder hold (a terminology's
new release, or one enriched with borrowed synonyms, differs from the last in a few percent of its names).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from medlink.encoders.base import Encoder
from medlink.folders import quick_record, replace_folder, sha256_of
from medlink.index import faiss_backend
from medlink.index.chunks import chunk_path, encode_chunk
from medlink.index.compressed import CompressedParameters, write_compressed
from medlink.index.entries import SOURCES, IndexEntry
from medlink.index.entry_table import ENTRIES, write_entries
from medlink.index.vector_index import (
    INDEX_FORMAT,
    INDEX_VERSION,
    MANIFEST,
    VectorIndex,
    faiss_file,
    read_index_manifest,
)
from medlink.version import __version__

DEFAULT_CHUNK = 4096
# A file larger than this is checked at load by its size and ends, not read whole: the entries and vectors of
# millions of names would take seconds to read at every load.
QUICK_CHECK_ABOVE = 64 << 20


def _entries_checksum(entries: Sequence[IndexEntry]) -> str:
    digest = hashlib.sha256()
    for entry in entries:
        digest.update(f"{entry.source}\t{entry.key}\t{entry.text}\n".encode())
    return digest.hexdigest()


def prepare_workdir(workdir: Path, plan: dict) -> None:
    """Keep ``workdir`` when an interrupted build of the same ``plan`` left it, else start it afresh."""
    plan_path = workdir / "plan.json"
    if workdir.exists() and (not plan_path.exists() or json.loads(plan_path.read_text()) != plan):
        shutil.rmtree(workdir)  # another build was interrupted here: start over
    workdir.mkdir(parents=True, exist_ok=True)
    plan_path.write_text(json.dumps(plan, indent=2))


def encode_resumably(
    encoder: Encoder,
    texts: Sequence[str],
    workdir: Path,
    chunk_size: int,
    progress: bool,
    into: np.ndarray,
    rows: Sequence[int],
) -> None:
    """Encode ``texts`` into fp16 chunk files under ``workdir`` (made by :func:`prepare_workdir`), reusing the
    chunks of an interrupted run, and copy text ``i``'s vector into ``into[rows[i]]`` (an array or, for millions
    of names, a memory map)."""
    from tqdm import tqdm

    starts = range(0, len(texts), chunk_size)
    if progress:  # the estimate's list of what is left is made only when it is shown
        pending = [
            t
            for number, start in enumerate(starts)
            if not chunk_path(workdir, number).exists()
            for t in texts[start : start + chunk_size]
        ]
        if len(pending) >= _ESTIMATE_ABOVE:
            print(expected_time(encoder, pending, len(texts) - len(pending)), file=sys.stderr)
    with tqdm(total=len(texts), desc="encoding names", unit=" names", disable=not progress) as bar:
        for number, start in enumerate(starts):
            batch = texts[start : start + chunk_size]
            if not chunk_path(workdir, number).exists():
                encode_chunk(encoder, batch, workdir, number)
            bar.update(len(batch))
    for number, start in enumerate(starts):
        into[rows[start : start + chunk_size]] = np.load(chunk_path(workdir, number))


_ESTIMATE_ABOVE = 5_000  # names to encode before a build says how long it expects to take
_SAMPLE = 1024  # as many as an encoder batch holds: fewer would time a slower, emptier batch


def expected_time(encoder: Encoder, pending: Sequence[str], done: int) -> str:
    """How long encoding ``pending`` should take, from timing the encoder on an even sample of them (their lengths
    decide the speed), in words for the user before a long build starts."""
    step = max(1, len(pending) // _SAMPLE)
    sample = list(pending[::step][:_SAMPLE])
    encoder.encode(sample[:8])  # the first call of a session is slow: not part of the rate
    started = time.perf_counter()
    encoder.encode(sample)
    rate = len(sample) / max(time.perf_counter() - started, 1e-6)
    when = _duration(len(pending) / rate)
    resumed = f" ({done:,} encoded by an interrupted run are kept)" if done else ""
    return (
        f"encoding {len(pending):,} names{resumed}: about {when} at {rate:,.0f} names/s, timed on {len(sample)} "
        "of them on this machine (interrupt it and run the same command again to resume)"
    )


def reload_spec(encoder: Encoder, origin: dict[str, str]) -> dict[str, object]:
    """What ``load_encoder`` takes to make ``encoder`` again in another process (as an index's manifest reopens it)."""
    identity = encoder.identity
    return {
        "name": origin.get("encoder", identity.model),
        "backend": origin.get("backend", "onnx"),
        "quantize": identity.quantization,
        "pooling": identity.pooling,
        "max_length": identity.max_length,
    }


def _duration(seconds: float) -> str:
    if seconds >= 5400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def workdir_of(output: Path) -> Path:
    """Where a build of ``output`` keeps its plan and encoded chunks until it is done."""
    return output.with_name(f".{output.name}.building")


def build_plan(
    entries: Sequence[IndexEntry],
    encoder: Encoder,
    chunk_size: int,
    terminology_fingerprint: str,
    missing: Sequence[int],
) -> dict:
    """What a build encodes: another plan in the work folder means another build, which starts over."""
    return {
        "encoder": encoder.identity.fingerprint(),
        "entries": _entries_checksum(entries),
        "chunk": chunk_size,
        "terminology": terminology_fingerprint,
        "encoded": hashlib.sha256(str(list(missing)).encode()).hexdigest(),
    }  # the rows not reused


def build_index(
    entries: Sequence[IndexEntry],
    encoder: Encoder,
    output: Path | str,
    terminology_fingerprint: str,
    kind: str = "auto",
    hnsw: faiss_backend.HnswParameters | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    progress: bool = False,
    origin: dict[str, str] | None = None,
    reuse: Sequence[Path] = (),
    compressed: CompressedParameters | None = None,
    workers: int = 1,
) -> Path:
    """Encode ``entries`` and write an index folder at ``output`` (atomically, resumably).

    ``origin`` records how to reopen what the index was built from (terminology folder, encoder name and backend),
    so ``medlink link --index`` needs nothing else. Texts that an index in ``reuse`` built with the same encoder
    holds are taken from it instead of encoded (indexes of other encoders are passed over). With ``workers`` > 1
    the names are encoded in that many processes of one thread each (the encoder reloaded from ``origin``).
    """
    output = Path(output)
    hnsw = hnsw or faiss_backend.HnswParameters()
    workdir = workdir_of(output)
    texts = [e.text for e in entries]
    reused = reusable_vectors(texts, reuse, encoder)
    missing = [row for row in range(len(texts)) if row not in reused]
    plan = build_plan(entries, encoder, chunk_size, terminology_fingerprint, missing)
    started = time.perf_counter()
    by_source: dict[str, list[IndexEntry]] = {}
    rows: dict[str, list[int]] = {}
    for row, entry in enumerate(entries):
        by_source.setdefault(entry.source, []).append(entry)
        rows.setdefault(entry.source, []).append(row)
    kinds = {source: faiss_backend.choose_kind(len(source_rows), kind) for source, source_rows in rows.items()}
    prepare_workdir(workdir, plan)
    shape = (len(texts), encoder.dimension)
    # Millions of names do not fit in memory as fp16 (12 M × 384 × 2 bytes = 9 GB): they wait on disk.
    vectors = (
        np.lib.format.open_memmap(workdir / "vectors.npy", mode="w+", dtype=np.float16, shape=shape)
        if "compressed" in kinds.values()
        else np.zeros(shape, dtype=np.float16)
    )
    pending = [texts[row] for row in missing]
    if workers > 1 and pending:
        from medlink.index.workers import encode_in_workers

        if progress and len(pending) >= _ESTIMATE_ABOVE:
            print(expected_time(encoder, pending, 0) + f"; {workers} workers", file=sys.stderr)
        encode_in_workers(pending, workdir, chunk_size, reload_spec(encoder, origin or {}), workers, progress)
    encode_resumably(encoder, pending, workdir, chunk_size, progress and workers <= 1, vectors, missing)
    if reused:
        vectors[list(reused)] = np.stack(list(reused.values()))
    encode_seconds = time.perf_counter() - started
    staging = workdir / "index"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    compressed = compressed or CompressedParameters()
    for source, source_rows in rows.items():
        selected = vectors[_as_slice(source_rows)]
        if kinds[source] == "compressed":
            graph = workdir / f"{source}.graph.faiss"  # kept until the build is done: a rerun goes on from it
            index = write_compressed(selected, staging, source, compressed, checkpoint=graph, progress=progress)
        else:
            index = faiss_backend.build_faiss(selected, kinds[source], hnsw)
        faiss_backend.write_faiss(index, staging / faiss_file(source))
    del vectors
    write_entries(by_source, staging / ENTRIES)
    timing = {
        "encode_seconds": round(encode_seconds, 1),
        "total_seconds": round(time.perf_counter() - started, 1),
        "encoded": len(missing),
        "reused": len(reused),
    }
    extra = {"compressed": asdict(compressed)} if "compressed" in kinds.values() else None
    write_manifest(staging, encoder, terminology_fingerprint, kinds, hnsw, by_source, timing, origin or {}, extra)
    replace_folder(staging, output, MANIFEST, "a medlink index")
    shutil.rmtree(workdir, ignore_errors=True)
    return output


def _as_slice(rows: Sequence[int]) -> slice | Sequence[int]:
    """Consecutive rows as a slice: a memory map sliced stays on disk, indexed by a list it is copied."""
    if rows and rows[-1] - rows[0] == len(rows) - 1:
        return slice(rows[0], rows[-1] + 1)
    return rows


def reusable_vectors(texts: Sequence[str], indexes: Sequence[Path], encoder: Encoder) -> dict[int, np.ndarray]:
    """Row of ``texts`` -> its fp16 vector, for the texts an index in ``indexes`` built with ``encoder`` holds (the
    first that holds one gives it). Every stored vector is ``encoder``'s vector of its entry's text, so taking it
    is encoding it again, without the cost; from an index of 8-bit codes (the default's) it is the decoded vector,
    within 8-bit rounding of the encoder's, and is rounded once more when the new index is 8-bit too."""
    wanted: dict[str, list[int]] = {}
    for row, text in enumerate(texts):
        wanted.setdefault(text, []).append(row)
    found: dict[int, np.ndarray] = {}
    for folder in indexes:
        if not wanted:
            break
        if read_index_manifest(Path(folder)).encoder_fingerprint != encoder.identity.fingerprint():
            continue
        index = VectorIndex.load(folder)
        for source, table in index.entries.items():
            stored = table.table.column("text").to_pylist()
            hits = [(position, text) for position, text in enumerate(stored) if text in wanted]
            if not hits:
                continue
            vectors = index.faiss[source].reconstruct_batch(np.array([p for p, _ in hits], dtype=np.int64))
            for (_, text), vector in zip(hits, vectors.astype(np.float16), strict=True):
                for row in wanted.pop(text, ()):
                    found[row] = vector
    return found


def file_records(folder: Path) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """The checksum of every file in ``folder`` but the manifest, and the quick records of the large ones."""
    paths = [path for path in sorted(folder.iterdir()) if path.name != MANIFEST]
    files = {path.name: sha256_of(path) for path in paths}
    return files, {path.name: quick_record(path) for path in paths if path.stat().st_size > QUICK_CHECK_ABOVE}


def write_manifest(
    folder: Path,
    encoder: Encoder,
    terminology_fingerprint: str,
    kinds: dict[str, str],
    hnsw: faiss_backend.HnswParameters,
    entries: dict[str, list[IndexEntry]],
    timing: dict[str, float],
    origin: dict[str, str],
    extra: dict | None = None,
) -> None:
    files, quick = file_records(folder)
    manifest = {
        "format": INDEX_FORMAT,
        "version": INDEX_VERSION,
        "medlink_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "encoder": asdict(encoder.identity),
        "encoder_fingerprint": encoder.identity.fingerprint(),
        "terminology": terminology_fingerprint,
        "dimension": encoder.dimension,
        "metric": "inner_product",
        "kinds": kinds,
        "hnsw": asdict(hnsw),
        "counts": {s: len(entries.get(s, [])) for s in SOURCES},
        "timing": timing,
        "origin": origin,
        **(extra or {}),
        "files": files,
        **({"quick_checks": quick} if quick else {}),
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
