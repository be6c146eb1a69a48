"""A compressed index searched over other scalar codes, made from one that exists without encoding anything or
linking the graph again: at millions of names the graph is hours of work and the codes minutes.

Each compressed source's vectors are decoded from what the index holds (``sq8`` codes, or ``sq4`` codes with their
residuals) and quantized again; for ``sq4`` their residuals are written beside the graph
(:mod:`medlink.index.rescored`). The HNSW graph and the entries are copied as they are, and the output is written to
a staging folder and renamed. The graph was linked by distances over the old codes; searching it over the new ones
is what an index built with the new codes would do apart from that.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from medlink.errors import MedlinkError
from medlink.folders import staged_folder, verify_checksums
from medlink.index import faiss_backend
from medlink.index.build import file_records
from medlink.index.compressed import FOUR_BIT, SCALAR_CODES, faiss_downcast, sample_rows, scalar_graph
from medlink.index.rescored import rescoring_files, write_residuals
from medlink.index.vector_index import MANIFEST, IndexFileError, VectorIndex, faiss_file
from medlink.version import __version__

_CHUNK = 65_536


def recode_index(source: Path | str, output: Path | str, codes: str) -> Path:
    """A copy of the compressed index at ``source`` whose compressed sources search over ``codes`` (``sq8`` or
    ``sq4``); refused for an index with no compressed source, with product codes, or with ``codes`` already."""
    source, output = Path(source), Path(output)
    if codes not in SCALAR_CODES:
        raise MedlinkError(f"an index can be recoded to {' or '.join(SCALAR_CODES)}, not {codes!r}")
    index = VectorIndex.load(source)
    manifest = index.manifest
    compressed = [name for name, kind in manifest.kinds.items() if kind == "compressed" and index.count(name)]
    if not compressed:
        raise MedlinkError(f"{source} has no compressed source to recode (its kinds: {dict(manifest.kinds)})")
    if manifest.compressed.codes not in SCALAR_CODES:
        raise MedlinkError(
            f"{source} is compressed with {manifest.compressed.codes!r} codes, which cannot be decoded to vectors "
            f"whole; build it again with --codes {codes} --reuse {source}"
        )
    if manifest.compressed.codes == codes:
        raise MedlinkError(f"{source} is compressed with {codes!r} codes already")
    _check_output(output)
    verify_checksums(source, dict(manifest.files), IndexFileError, "index", manifest.quick_checks)
    replaced = {name for part in compressed for name in (faiss_file(part), *rescoring_files(part))}
    with staged_folder(output, MANIFEST, "a medlink index") as staging:
        for part in compressed:
            recoded = recoded_graph(index.faiss[part], codes, manifest.compressed.training, staging, part)
            faiss_backend.write_faiss(recoded, staging / faiss_file(part))
        for name in manifest.files:  # what the manifest lists, never a stray file beside it
            if name not in replaced:
                shutil.copy2(source / name, staging / name)
        written = dict(manifest.written)
        files, quick = file_records(staging)
        written.update(
            medlink_version=__version__,
            compressed=asdict(replace(manifest.compressed, codes=codes)),
            recoded_from=manifest.compressed.codes,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            files=files,
            quick_checks=quick,
        )
        (staging / MANIFEST).write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")
    return output


def _check_output(output: Path) -> None:
    """Refused before minutes of work: an output that is a file, or a folder holding something other than an index."""
    if output.exists() and (not output.is_dir() or (any(output.iterdir()) and not (output / MANIFEST).exists())):
        raise MedlinkError(f"{output} exists and is not a medlink index; refusing to overwrite it")


def recoded_graph(searched: Any, codes: str, training: int, folder: Path, source: str) -> Any:
    """The graph of ``searched`` (a loaded compressed source: FAISS's HNSW index, or the re-scoring wrapper around
    one) with the same links over ``codes``, trained on ``training`` decoded rows spread over it; for ``sq4`` the
    residuals are written to ``folder``."""
    graph = getattr(searched, "index", searched)
    rows = graph.ntotal
    new = scalar_graph(graph.d, codes, graph.hnsw.nb_neighbors(1))
    new.hnsw = graph.hnsw  # SWIG assigns the C++ struct: the links are copied
    sample = searched.reconstruct_batch(sample_rows(rows, training))
    new.storage.train(sample)
    added = _added(new.storage, searched, rows)  # each chunk decoded once, for its codes and its residuals
    if codes == FOUR_BIT:
        write_residuals(faiss_downcast(new.storage), added, rows, sample, folder, source)
    else:
        deque(added, maxlen=0)  # drained: adding them is all sq8 codes need
    new.ntotal, new.is_trained = rows, True
    new.hnsw.efSearch = graph.hnsw.efSearch
    return new


def _added(storage: Any, searched: Any, rows: int) -> Iterator[np.ndarray]:
    """The rows of ``searched`` decoded a chunk at a time, each added to ``storage`` as it is yielded."""
    for start in range(0, rows, _CHUNK):
        chunk = np.ascontiguousarray(searched.reconstruct_n(start, min(_CHUNK, rows - start)), dtype=np.float32)
        storage.add(chunk)
        yield chunk
