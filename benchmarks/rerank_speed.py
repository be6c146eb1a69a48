"""Benchmark: end-to-end linking speed with the rerank stage, against the same linker without it (issue 18).

Target: unique unseen mentions end to end with rerank ≥ 250/s on 2 cores. The mentions are those of
benchmarks/dense_linking.py (NCBI-disease and BC5CDR mentions that match no name exactly, topped up with
misspelt names), so every one reaches dense retrieval. Each run builds a fresh linker, links one warm-up
mention, then the timed batch (no cached results or vectors). Prints JSON.

    python benchmarks/rerank_speed.py --index INDEX --reranker RERANKER [--count 5000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from dense_linking import benchmark_mentions

from medlink.linking import Linker, LinkerConfig

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def timed(make: Callable[[], Linker], texts: list[str], repeats: int) -> tuple[float, int]:
    """Mentions per second (best of ``repeats`` fresh linkers) and how many decisions were reranked."""
    best, reranked = float("inf"), 0
    for _ in range(repeats):
        linker = make()
        linker.link("warm-up")
        start = time.perf_counter()
        results = linker.link_many(texts)
        best = min(best, time.perf_counter() - start)
        reranked = sum("reranked" in result.reason for result in results)
    return len(texts) / best, reranked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--reranker", type=Path, required=True)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--margin", type=float, default=None, help="override the reranker's fitted margin")
    args = parser.parse_args()
    probe = Linker.load(args.index, reranker=args.reranker)
    mentions = benchmark_mentions(probe.terminology, SHARED, args.count)
    if args.margin is not None:
        from dataclasses import replace

        probe.reranker.card = replace(probe.reranker.card, margin=args.margin)  # type: ignore[union-attr]

    def reranking() -> Linker:
        return probe if args.margin is not None else Linker.load(args.index, reranker=args.reranker)

    without_per_s, _ = timed(lambda: Linker.load(args.index, config=LinkerConfig(rerank=False)), mentions, args.repeats)
    with_per_s, reranked = timed(reranking, mentions, 1 if args.margin is not None else args.repeats)
    card = probe.reranker.card  # type: ignore[union-attr]
    print(
        json.dumps(
            {
                "machine": f"{platform.machine()}, {platform.system()}",
                "mentions": len(mentions),
                "reranker": str(args.reranker),
                "margin": card.margin,
                "top_k": card.top_k,
                "reranked": reranked,
                "without_rerank_per_s": round(without_per_s, 1),
                "with_rerank_per_s": round(with_per_s, 1),
                "target_per_s": 250,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
