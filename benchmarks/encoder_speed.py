"""Benchmark: the same linking workloads with different encoders, side by side (e.g. the default model against a
distilled student from `medlink distill`).

    python benchmarks/encoder_speed.py --index MESH_INDEX_A --index MESH_INDEX_B [--rounds 2]
        [--ef-search 64] [--terminology MESH_TERMINOLOGY]

Each index is one encoder's index over the same terminology (MeSH descriptors + supplementary concepts, as in
dense_linking.py). Per index and round: the encoder alone on the 10k unseen mentions, the same mentions end to end
(exact → OD-T), and dense_linking.py's stream of 100k mentions, 80 % exact or repeated. Rounds interleave the
indexes, because this shared VM's speed drifts within minutes. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dense_linking import benchmark_mentions, cold_link_seconds, realistic_stream, timed


def main() -> int:
    from medlink.linking import Linker
    from medlink.linking.sieves.dense import CachingEncoder

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, action="append", required=True, help="repeat: one index per encoder")
    parser.add_argument("--terminology", type=Path, help="their compiled terminology, if not recorded")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--ef-search", type=int, default=64, help="one HNSW beam for all (indexes built before 2026-11-23 stored 128)"
    )
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    args = parser.parse_args()

    linkers = [
        Linker.load(folder, terminology=args.terminology, sieves="exact,OD-T", ef_search=args.ef_search)
        for folder in args.index
    ]
    mentions = benchmark_mentions(linkers[0].terminology, args.shared)
    stream = realistic_stream(linkers[0].terminology, mentions)
    print(
        "| round | encoder (layers) | encoder alone | 10k unseen, end to end | share | stream, 80 % exact or repeated |"
    )
    print("|---:|---|---:|---:|---:|---:|")
    for round_ in range(1, args.rounds + 1):
        for linker in linkers:
            cached = linker.sieves[1].encoder
            assert isinstance(cached, CachingEncoder)
            encoder = cached.encoder
            encoder.encode(mentions[:200])  # warm-up: first ONNX runs allocate
            _, encode_s = timed(encoder.encode, mentions)
            link_s = cold_link_seconds(linker, mentions)
            stream_s = cold_link_seconds(linker, stream)
            layers = _layers(encoder.identity.model)
            print(
                f"| {round_} | {Path(encoder.identity.model).name} ({layers}) | {len(mentions) / encode_s:,.0f}/s "
                f"| {len(mentions) / link_s:,.0f}/s | {encode_s / link_s:.0%} | {len(stream) / stream_s:,.0f}/s |",
                flush=True,
            )
    return 0


def _layers(model: str) -> str:
    import json

    config = Path(model) / "config.json"
    return str(json.loads(config.read_text()).get("num_hidden_layers", "?")) if config.exists() else "?"


if __name__ == "__main__":
    raise SystemExit(main())
