"""Benchmark: which codes the compressed index kind's graph should search over (issue 59). Prints JSON lines.

Takes the first ``--names`` vectors a build encoded (its work folder's fp16 chunks, e.g. those of the 12 M-row
release's build) and the query vectors ``benchmarks/dense_scale.py`` saved, builds each index with medlink's own
``write_compressed`` and reports, per ``ef_search``, how often its top name is the one exact search over the fp16
vectors finds; for 8-bit codes also the ceiling their rounding leaves (exact search over the decoded codes). Build
seconds and bytes on disk come with each.

    python benchmarks/compressed_codes.py --chunks DIR/.dense.building/chunks \\
        --queries DIR/dense-bench/queries.npy --names 1000000 --codes sq8:16 sq8:24 pq:24
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

_BLOCK = 200_000


def first_vectors(chunks: Path, names: int) -> np.ndarray:
    parts, count = [], 0
    for chunk in sorted(chunks.glob("[0-9][0-9][0-9][0-9][0-9].npy")):
        parts.append(np.load(chunk))
        count += len(parts[-1])
        if count >= names:
            break
    return np.concatenate(parts)[:names].astype(np.float32)


def exact_top(queries: np.ndarray, rows_of, total: int) -> np.ndarray:
    """The best of ``total`` rows per query, scoring every row (``rows_of(start, count)`` gives a block of them)."""
    best = np.full(len(queries), -np.inf, dtype=np.float32)
    top = np.zeros(len(queries), dtype=np.int64)
    for start in range(0, total, _BLOCK):
        scores = queries @ rows_of(start, min(_BLOCK, total - start)).T
        found = scores.argmax(axis=1)
        value = scores[np.arange(len(queries)), found]
        better = value > best
        best[better], top[better] = value[better], start + found[better]
    return top


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--names", type=int, default=1_000_000)
    parser.add_argument("--codes", nargs="+", default=["sq8:16", "pq:24"], help="CODES:LINKS, e.g. sq8:16 pq:24")
    parser.add_argument("--ef", type=int, nargs="+", default=[256, 512, 768])
    args = parser.parse_args()
    import faiss

    from medlink.index.compressed import SCALAR, CompressedParameters, write_compressed
    from medlink.index.rescored import Rescored, row_reader

    vectors = first_vectors(args.chunks, args.names)
    queries = np.load(args.queries).astype(np.float32)
    reference = exact_top(queries, lambda start, count: vectors[start : start + count], len(vectors))
    for spec in args.codes:
        codes, links = spec.split(":")
        with tempfile.TemporaryDirectory() as folder:
            parameters = CompressedParameters(codes=codes, links=int(links))
            started = time.perf_counter()
            index = write_compressed(vectors, Path(folder), "O", parameters)
            build_s = time.perf_counter() - started
            faiss.write_index(index, str(Path(folder) / "O.faiss"))
            size_mb = sum(path.stat().st_size for path in Path(folder).iterdir()) / 1e6
            ceiling = None
            if codes == SCALAR:
                decoded = exact_top(queries, index.reconstruct_n, index.ntotal)
                ceiling = float(np.mean(decoded == reference))
            for ef in args.ef:
                searched = index
                if codes == SCALAR:
                    index.hnsw.efSearch = ef
                else:
                    rows = row_reader(index, Path(folder), "O", codes)
                    searched = Rescored(index, rows, parameters.rescore, ef)
                started = time.perf_counter()
                _, found = searched.search(queries, 1)
                search_s = time.perf_counter() - started
                print(json.dumps({
                    "names": len(vectors), "codes": codes, "links": int(links), "ef_search": ef,
                    "top1_equals_exact_fp16": round(float(np.mean(found[:, 0] == reference)), 4),
                    "exact_over_codes_equals_fp16": None if ceiling is None else round(ceiling, 4),
                    "searches_per_s": round(len(queries) / search_s), "build_s": round(build_s),
                    "mb_on_disk": round(size_mb), "date": time.strftime("%Y-%m-%d"),
                }), flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
