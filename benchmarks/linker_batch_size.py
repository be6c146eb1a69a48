"""Benchmark: end-to-end linking speed as a share of the encoder's own speed, per linker batch size and HNSW
efSearch.

    python benchmarks/linker_batch_size.py --index MESH_INDEX [--batch-sizes 1024,4096,16384] [--rounds 2]
        [--ef-search 64,128] [--terminology MESH_TERMINOLOGY]

MESH_INDEX as in dense_linking.py (MeSH descriptors + supplementary concepts). The same 10k unseen mentions are
linked (exact → OD-T) once per batch size and round, with the linker's result cache and the vector cache emptied
each time, and the encoder alone is timed at the start of every round. This machine is a shared VM whose speed
drifts by ±20 % within minutes, so only shares measured side by side in one process are compared.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dense_linking import benchmark_mentions, cold_link_seconds


def main() -> int:
    from medlink.linking import Linker
    from medlink.linking.sieves.dense import CachingEncoder

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, required=True, help="index over MeSH descriptors + supplementary")
    parser.add_argument("--terminology", type=Path, help="its compiled terminology, when the index does not record it")
    parser.add_argument("--batch-sizes", default="1024,4096,16384")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ef-search", default=None, help="HNSW beams to compare (default: the index's own)")
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    args = parser.parse_args()

    linker = Linker.load(args.index, terminology=args.terminology, sieves="exact,OD-T")
    cached = linker.sieves[1].encoder
    assert isinstance(cached, CachingEncoder)
    mentions = benchmark_mentions(linker.terminology, args.shared)
    cached.encoder.encode(mentions[:200])  # warm-up: first ONNX runs allocate
    searched = linker.sieves[1].index.faiss["O"]
    beams = [int(b) for b in args.ef_search.split(",")] if args.ef_search else [None]
    print("| round | batch size | efSearch | end to end (mentions/s) | encoder alone (mentions/s) | share |")
    print("|---:|---:|---:|---:|---:|---:|")
    for round_ in range(1, args.rounds + 1):
        started = time.perf_counter()
        cached.encoder.encode(mentions)
        encode_s = time.perf_counter() - started
        for batch_size, beam in ((int(b), e) for b in args.batch_sizes.split(",") for e in beams):
            if beam is not None:
                getattr(searched, "index", searched).hnsw.efSearch = beam  # a re-scored graph wraps the FAISS one
            linker.config = replace(linker.config, batch_size=batch_size)
            link_s = cold_link_seconds(linker, mentions)
            ef = searched.hnsw.efSearch if hasattr(searched, "hnsw") else "exact"
            print(
                f"| {round_} | {batch_size:,} | {ef} | {len(mentions) / link_s:,.0f} "
                f"| {len(mentions) / encode_s:,.0f} | {encode_s / link_s:.0%} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
