"""The compressed index kind for terminologies of the UMLS's size: an HNSW graph over codes far smaller than the
fp16 vectors of the ``hnsw`` kind (about 1 KB per name with its graph: 12 GB for the UMLS's 12 M names).

Two kinds of codes (``CompressedParameters.codes``):

- ``sq8`` (the default): one byte per dimension (8-bit scalar quantization, per-dimension ranges trained on a
  sample) and 16 links per node; the graph is searched over the codes with inner product and nothing is re-scored.
  About 530 bytes per name on disk, and the file is mapped, not read: processes share its pages through the page
  cache and each keeps little of its own (Spark's Python workers among them).
- ``pq``: ``subquantizers`` bytes of product-quantized code (96 for 384 dimensions) and 24 links; a search walks the
  graph over the PQ codes for ``rescore`` × k candidates, then re-scores them exactly from int8 vectors read with
  ``pread`` (``SOURCE.int8.npy``, rows × dimension, and ``SOURCE.scale.npy``: a vector is ``int8 × scale``). About
  690 bytes per name on disk. Indexes built before the ``sq8`` codes were these.

Measured with medlink-fast int8 vectors of the synthetic UMLS-size release, 2,000 unseen mentions, exact search over
the fp16 vectors as reference (docs/performance.md): over its first million names ``sq8`` with 16 links found the
exact top name for 98.75 % at ef_search 768 (99.6 % of what exact search over its own codes finds; 8-bit rounding
alone costs 0.85 points), where ``pq`` with 24 links had found 99.05 % over another million-name release; at
400,000 names 99.3 % against 99.7 %. On disk ``sq8`` takes 528 bytes a name against ~690, and at millions of names
only it keeps an index within 6 GB (8.9 M names: ~5.5 GB with its entries), so it is the default.

An inverted file (IVF-PQ) was tried first: a name only moderately similar to the mention (cosine ~0.65, common in
clinical text) can sit in a cell whose centroid the query is far from, and even 200 of 825 cells probed missed one
such name on NCBI-disease. The graph reaches more of them (Acc@5 93.65 against IVF-PQ's 93.54; Acc@1 90.83 for
both, against 91.04 for HNSW over fp16 vectors: docs/performance.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

_ADD_CHUNK = 65_536


SCALAR, PRODUCT = "sq8", "pq"  # the codes the graph is searched over


@dataclass(frozen=True)
class CompressedParameters:
    """``codes``: ``sq8`` or ``pq`` (see the module's text); ``links``: HNSW links per node (memory, recall);
    ``ef_construction``: build-time beam; ``ef_search``: search-time beam, the speed/recall knob (the manifest's
    value is applied on load: tunable without a rebuild); ``training``: vectors sampled to train the codes' ranges or
    codebooks; for ``pq`` only, ``subquantizers``: PQ bytes per vector (default dimension / 4) and ``rescore``:
    candidates re-scored exactly per result asked. ``CompressedParameters.product()`` gives the ``pq`` defaults,
    which agreed with exact search on the top name for 99.05 % of 2,000 unseen mentions over a million UMLS-like
    names at 444 searches/s (docs/performance.md)."""

    codes: str = SCALAR
    links: int = 16
    ef_construction: int = 200
    ef_search: int = 768
    subquantizers: int | None = None
    rescore: int = 20
    training: int = 200_000

    def __post_init__(self) -> None:
        if self.codes not in (SCALAR, PRODUCT):
            raise ValueError(f"compressed codes must be {SCALAR!r} or {PRODUCT!r}, not {self.codes!r}")

    @classmethod
    def product(cls, **changes: Any) -> CompressedParameters:
        """The ``pq`` codes with 24 links, as indexes were built before ``sq8``."""
        return cls(**{"codes": PRODUCT, "links": 24, **changes})

    @staticmethod
    def bits_for(rows: int) -> int:
        """Bits per PQ code: 8, fewer only when there are not 256 vectors to train each codebook on."""
        return max(1, min(8, int(np.log2(max(rows, 2)))))

    def subquantizers_for(self, dimension: int) -> int:
        wanted = self.subquantizers or max(1, dimension // 4)
        while dimension % wanted:  # PQ splits the dimensions evenly
            wanted -= 1
        return wanted


def vectors_file(source: str) -> str:
    return f"{source}.int8.npy"


def scale_file(source: str) -> str:
    return f"{source}.scale.npy"


def write_compressed(
    vectors: np.ndarray,
    folder: Path,
    source: str,
    parameters: CompressedParameters,
    checkpoint: Path | None = None,
    progress: bool = False,
) -> Any:
    """Train and fill an HNSW index over ``parameters.codes`` of ``vectors`` (unit vectors, any float array, a
    memory map included: it is read in chunks), for ``pq`` with the int8 copy written beside it; returns the FAISS
    index for the caller to write. The ``pq`` graph uses L2 distance, which ranks unit vectors as cosine does.

    Filling the graph is the slow part at millions of names (hours on 2 cores at 12 M), so with ``checkpoint`` the
    graph built so far is saved there every :data:`CHECKPOINT_SECONDS` and a later call with the same vectors and
    parameters goes on from it (the caller's work folder is cleared when what it builds changes)."""
    rows, dimension = vectors.shape
    sample = np.ascontiguousarray(vectors[_sample_rows(rows, parameters.training)], dtype=np.float32)
    scale = np.maximum(np.abs(sample).max(axis=0), 1e-6).astype(np.float32) / 127.0  # the int8 rows' (pq)
    card = _checkpoint_card(parameters, rows, sample)
    index = _resumed_graph(checkpoint, card) if checkpoint else None
    if index is None:
        index = _trained_graph(sample, dimension, parameters)
    del sample
    _fill_graph(index, vectors, checkpoint, card, progress)
    if parameters.codes == SCALAR:
        return index  # its codes are all a search reads: nothing is written beside it
    np.save(folder / scale_file(source), scale)
    codes = np.lib.format.open_memmap(folder / vectors_file(source), mode="w+", dtype=np.int8, shape=(rows, dimension))
    for start in range(0, rows, _ADD_CHUNK):
        codes[start : start + _ADD_CHUNK] = quantize(np.asarray(vectors[start : start + _ADD_CHUNK], np.float32), scale)
    codes.flush()
    del codes
    return index  # ef_search is set where it is read (Rescored), from the manifest


CHECKPOINT_SECONDS = 600.0  # a graph of 12 M names takes ~10 s to save: a few percent of the time, at most 10 min lost


def _trained_graph(sample: np.ndarray, dimension: int, parameters: CompressedParameters) -> Any:
    import faiss

    index: Any
    if parameters.codes == SCALAR:
        # faiss's stubs want a ScalarQuantizer object; the C++ constructor takes the quantizer type's value
        index = faiss.IndexHNSWSQ(
            dimension,
            faiss.ScalarQuantizer.QT_8bit,  # type: ignore[arg-type]
            parameters.links,
            faiss.METRIC_INNER_PRODUCT,
        )
    else:
        # faiss's stubs list one overload of the constructor; this is its documented (d, pq_m, M, pq_nbits) form
        index = faiss.IndexHNSWPQ(
            dimension,
            parameters.subquantizers_for(dimension),  # type: ignore[arg-type]
            parameters.links,
            parameters.bits_for(len(sample)),
        )
        codes_index: Any = faiss.downcast_index(index.storage)
        codes_index.pq.cp.min_points_per_centroid = 1  # the sample is all there is: no warning that more would help
    index.hnsw.efConstruction = parameters.ef_construction
    index.train(sample)
    return index


def _fill_graph(index: Any, vectors: np.ndarray, checkpoint: Path | None, card: dict[str, Any], progress: bool) -> None:
    """Add the rows ``index`` does not hold yet, saving it to ``checkpoint`` now and then."""
    from tqdm import tqdm

    rows = len(vectors)
    saved = time.monotonic()
    with tqdm(total=rows, initial=index.ntotal, desc="linking the graph", unit=" names", disable=not progress) as bar:
        for start in range(index.ntotal, rows, _ADD_CHUNK):
            index.add(np.ascontiguousarray(vectors[start : start + _ADD_CHUNK], dtype=np.float32))
            bar.update(index.ntotal - bar.n)
            if checkpoint is not None and index.ntotal < rows and time.monotonic() - saved >= CHECKPOINT_SECONDS:
                _save_checkpoint(index, checkpoint, card)
                saved = time.monotonic()


def _checkpoint_card(parameters: CompressedParameters, rows: int, sample: np.ndarray) -> dict[str, Any]:
    """What a saved graph must have been built with to be gone on from: the build-time parameters (not the
    search-time ones), as many rows, and the same training sample (a fingerprint of the vectors)."""
    built = {key: value for key, value in asdict(parameters).items() if key not in ("ef_search", "rescore")}
    return {"parameters": built, "rows": rows, "sample": hashlib.sha256(sample.tobytes()).hexdigest()}


def _save_checkpoint(index: Any, checkpoint: Path, card: dict[str, Any]) -> None:
    """The graph so far, written beside ``checkpoint`` and renamed, then its card the same way: a kill while saving
    keeps the last one whole, and a card only ever names a graph that is whole."""
    import faiss

    card_path = checkpoint.with_suffix(".json")
    for stray in checkpoint.parent.glob(f"{checkpoint.name}.*.partial"):  # left by a killed save
        stray.unlink(missing_ok=True)
    partial = checkpoint.with_name(f"{checkpoint.name}.{os.getpid()}.partial")
    faiss.write_index(index, str(partial))
    card_path.unlink(missing_ok=True)
    os.replace(partial, checkpoint)
    partial_card = card_path.with_name(f"{card_path.name}.{os.getpid()}.partial")
    partial_card.write_text(json.dumps(card | {"added": int(index.ntotal)}))
    os.replace(partial_card, card_path)


def _resumed_graph(checkpoint: Path, card: dict[str, Any]) -> Any | None:
    """The graph an interrupted build saved at ``checkpoint``, if its card is ``card``; ``None`` otherwise, or when
    it cannot be read (the graph is then built afresh)."""
    import faiss

    try:
        saved = json.loads(checkpoint.with_suffix(".json").read_text())
        added = saved.pop("added", None)
        if saved != json.loads(json.dumps(card)):
            return None
        index: Any = faiss.read_index(str(checkpoint))
    except (OSError, ValueError, RuntimeError):  # RuntimeError: FAISS on a damaged file
        return None
    if index.ntotal != added:
        return None
    index.hnsw.efConstruction = card["parameters"]["ef_construction"]
    return index


def quantize(vectors: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(vectors / scale), -127, 127).astype(np.int8)


def _sample_rows(rows: int, wanted: int) -> np.ndarray:
    """Evenly spaced rows (sorted: a memory map reads them in one pass)."""
    return np.unique(np.linspace(0, rows - 1, num=min(rows, wanted)).astype(np.int64))


class Rescored:
    """An HNSW-PQ index whose candidates are re-scored from the int8 vectors on disk; searched like a FAISS index."""

    def __init__(self, index: Any, folder: Path, source: str, parameters: CompressedParameters) -> None:
        self.index = index
        self.index.hnsw.efSearch = parameters.ef_search  # the manifest's value: tunable without a rebuild
        self.ntotal = index.ntotal
        self.rescore = parameters.rescore
        self.scale = np.load(folder / scale_file(source))
        self._path = folder / vectors_file(source)
        mapped = np.load(self._path, mmap_mode="r")
        self._offset, self._shape = mapped.offset, mapped.shape
        if self._shape[0] != self.ntotal:
            raise ValueError(f"{self._shape[0]} vectors for {self.ntotal} codes")
        del mapped
        self._descriptor = os.open(self._path, os.O_RDONLY)

    def __del__(self) -> None:
        descriptor = getattr(self, "_descriptor", None)
        if descriptor is not None:
            os.close(descriptor)

    def rows(self, rows: Sequence[int]) -> np.ndarray:
        """The int8 vectors of ``rows`` as float32 (``int8 × scale``)."""
        width = self._shape[1]
        buffer = b"".join(os.pread(self._descriptor, width, self._offset + row * width) for row in rows)
        return np.frombuffer(buffer, dtype=np.int8).reshape(len(rows), width).astype(np.float32) * self.scale

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        _, candidates = self.index.search(queries, min(self.ntotal, max(k * self.rescore, self.index.hnsw.efSearch)))
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        found = np.full((len(queries), k), -1, dtype=np.int64)
        for number, (query, rows) in enumerate(zip(queries, candidates, strict=True)):
            rows = np.unique(rows[rows >= 0])  # sorted: the reads go forward through the file
            if not len(rows):
                continue
            exact = self.rows(rows.tolist()) @ query
            best = np.argsort(-exact, kind="stable")[:k]
            scores[number, : len(best)], found[number, : len(best)] = exact[best], rows[best]
        return scores, found

    def reconstruct_n(self, start: int, count: int) -> np.ndarray:
        """A run of rows (concept centroids read them all), through a memory map: sequential, unlike a search."""
        mapped = np.load(self._path, mmap_mode="r")
        return mapped[start : start + count].astype(np.float32) * self.scale

    def reconstruct_batch(self, rows: np.ndarray) -> np.ndarray:
        return self.rows(rows.tolist())
