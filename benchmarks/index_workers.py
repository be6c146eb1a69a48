"""Benchmark: encoding an index's names in one process (ONNX using every core) against worker processes of one
thread each (``medlink index build --workers N``, issue 37).

Builds the same index of ``--names`` distinct names of the embedded MeSH descriptors (an even sample) once per
setting, each from an empty folder, with the default encoder (int8 ONNX), and reports wall time and names/s.

    python benchmarks/index_workers.py [--names 20000] [--workers 1 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from medlink.encoders import load_encoder
from medlink.encoders.registry import DEFAULT_MODEL
from medlink.index import build_index, ontology_entries
from medlink.terminology import load_default_terminology


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", type=int, default=20_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    terminology = load_default_terminology()
    entries = ontology_entries(terminology)
    sample = entries[:: max(1, len(entries) // args.names)][: args.names]
    encoder = load_encoder(DEFAULT_MODEL)  # int8 ONNX, as index build encodes by default
    encoder.encode(["warm-up"])
    print(f"| workers | seconds | names/s |  ({len(sample):,} names, {DEFAULT_MODEL} int8)\n|---:|---:|---:|")
    for workers in args.workers:
        with tempfile.TemporaryDirectory() as work:
            started = time.perf_counter()
            build_index(
                sample,
                encoder,
                Path(work) / "index",
                terminology.fingerprint(),
                workers=workers,
                origin={"encoder": DEFAULT_MODEL, "backend": "onnx"},
            )
            seconds = time.perf_counter() - started
        print(f"| {workers} | {seconds:.1f} | {len(sample) / seconds:,.0f} |")


if __name__ == "__main__":
    main()
