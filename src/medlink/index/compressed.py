"""The compressed index kind for terminologies of the UMLS's size: an HNSW graph over codes far smaller than the
fp16 vectors of the ``hnsw`` kind (about 1 KB per name with its graph: 12 GB for the UMLS's 12 M names).

Three kinds of codes (``CompressedParameters.codes``):

- ``sq8`` (the default): one byte per dimension (8-bit scalar quantization, per-dimension ranges trained on a
  sample) and 16 links per node; the graph is searched over the codes with inner product and nothing is re-scored.
  About 530 bytes per name on disk, and the file is mapped, not read: processes share its pages through the page
  cache and each keeps little of its own (Spark's Python workers among them).
- ``sq4``: half a byte per dimension in the graph, its candidates re-scored from 4-bit residuals read from disk,
  which together are about as fine as ``sq8`` (:mod:`medlink.index.rescored`): as large on disk, but at 8.9 M
  names its searches touched 2.85 GB of pages where ``sq8``'s touched 4.4 GB, at half the speed: for a machine
  whose memory cannot hold the ``sq8`` graph's pages. ``medlink index recode`` makes it from an ``sq8`` index in
  minutes, keeping the graph (:mod:`medlink.index.recode`).
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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlink.index.rescored import quantize, scale_file, vectors_file, write_residuals

_ADD_CHUNK = 65_536


SCALAR, FOUR_BIT, PRODUCT = "sq8", "sq4", "pq"  # the codes the graph is searched over
SCALAR_CODES = (SCALAR, FOUR_BIT)  # scalar quantizers: decodable whole, so an index can be recoded between them
CODES = (*SCALAR_CODES, PRODUCT)


@dataclass(frozen=True)
class CompressedParameters:
    """``codes``: ``sq8``, ``sq4`` or ``pq`` (see the module's text); ``links``: HNSW links per node (memory,
    recall); ``ef_construction``: build-time beam; ``ef_search``: search-time beam, the speed/recall knob (the
    manifest's value is applied on load: tunable without a rebuild); ``training``: vectors sampled to train the
    codes' ranges or codebooks; for ``pq`` only, ``subquantizers``: PQ bytes per vector (default dimension / 4); for
    ``pq`` and ``sq4``, ``rescore``: candidates re-scored per result asked (at least ``ef_search`` of them).
    ``CompressedParameters.product()`` gives the ``pq`` defaults, which agreed with exact search on the top name for
    99.05 % of 2,000 unseen mentions over a million UMLS-like names at 444 searches/s (docs/performance.md)."""

    codes: str = SCALAR
    links: int = 16
    ef_construction: int = 200
    ef_search: int = 768
    subquantizers: int | None = None
    rescore: int = 20
    training: int = 200_000

    def __post_init__(self) -> None:
        if self.codes not in CODES:
            raise ValueError(f"compressed codes must be one of {', '.join(CODES)}, not {self.codes!r}")

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
    sample = np.ascontiguousarray(vectors[sample_rows(rows, parameters.training)], dtype=np.float32)
    scale = np.maximum(np.abs(sample).max(axis=0), 1e-6).astype(np.float32) / 127.0  # the int8 rows' (pq)
    card = _checkpoint_card(parameters, rows, sample)
    index = _resumed_graph(checkpoint, card) if checkpoint else None
    if index is None:
        index = _trained_graph(sample, dimension, parameters)
    del sample
    _fill_graph(index, vectors, checkpoint, card, progress)
    if parameters.codes == SCALAR:
        return index  # its codes are all a search reads: nothing is written beside it
    if parameters.codes == FOUR_BIT:
        chunks = (vectors[start : start + _ADD_CHUNK] for start in range(0, rows, _ADD_CHUNK))
        sample = vectors[sample_rows(rows, parameters.training)]
        write_residuals(faiss_downcast(index.storage), chunks, rows, sample, folder, source)
        return index
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
    if parameters.codes in SCALAR_CODES:
        index = scalar_graph(dimension, parameters.codes, parameters.links)
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


def faiss_downcast(index: Any) -> Any:
    import faiss

    return faiss.downcast_index(index)


def scalar_quantizer(codes: str) -> int:
    """FAISS's quantizer type of ``sq8`` or ``sq4`` codes."""
    import faiss

    return {SCALAR: faiss.ScalarQuantizer.QT_8bit, FOUR_BIT: faiss.ScalarQuantizer.QT_4bit}[codes]


def scalar_graph(dimension: int, codes: str, links: int) -> Any:
    """An empty HNSW graph over ``sq8`` or ``sq4`` codes, inner product."""
    import faiss

    # faiss's stubs want a ScalarQuantizer object; the C++ constructor takes the quantizer type's value
    return faiss.IndexHNSWSQ(
        dimension,
        scalar_quantizer(codes),  # type: ignore[arg-type]
        links,
        faiss.METRIC_INNER_PRODUCT,
    )


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


def sample_rows(rows: int, wanted: int) -> np.ndarray:
    """Evenly spaced rows (sorted: a memory map reads them in one pass)."""
    return np.unique(np.linspace(0, rows - 1, num=min(rows, wanted)).astype(np.int64))
