"""Benchmark: ``medlink trials match`` against a trial index, warm, on the CPU.

Target (issue 17): a note against the 5,097 shared trials in < 1 s warm on 2 cores. "Warm" means the index and
encoders are loaded and one note has been matched before the clock starts. The notes are the TREC CT 2021 topics
(long, 5–10 sentences). Reports latency per note (p50, p95, max), resident memory, the index's size per trial and a
projection of both to 100k trials and to all of ClinicalTrials.gov (~550,000), as JSON.

    python benchmarks/trial_matching.py --index trial-index/ [--rerank msmarco] [--notes 30]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

from medlink.trials.matching.judged_collections import read_trec
from medlink.trials.matching.matcher_spec import MatcherSpec

SHARED = Path(__file__).resolve().parents[1].parent / "shared/data/trials/trec-ct/trec_2021"
REGISTRY = 550_000


def rss_mb(field: str = "VmRSS") -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field)) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--topics", type=Path, default=SHARED)
    parser.add_argument("--notes", type=int, default=30)
    parser.add_argument("--rerank", default=None)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    before = rss_mb()
    started = time.perf_counter()
    matcher = MatcherSpec(args.index, reranker=args.rerank).build()
    load_seconds = time.perf_counter() - started
    notes = list(read_trec(args.topics).notes.values())[: args.notes]
    matcher.match(notes[0], args.top)  # warm: tokenizer, ONNX session, memory maps
    latencies = []
    for note in notes:
        started = time.perf_counter()
        matcher.match(note, args.top)
        latencies.append(time.perf_counter() - started)
    trials = len(matcher.index)
    disk = sum(p.stat().st_size for p in args.index.rglob("*") if p.is_file())
    loaded = rss_mb() - before
    print(json.dumps({
        "trials": trials, "notes": len(latencies), "rerank": args.rerank, "index_load_s": round(load_seconds, 2),
        "latency_s": {"p50": round(statistics.median(latencies), 3),
                      "p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 3),
                      "max": round(max(latencies), 3)},
        "rss_mb": round(rss_mb()), "peak_rss_mb": round(rss_mb("VmHWM")), "rss_growth_from_loading_mb": round(loaded),
        "index_disk_mb": round(disk / 2**20, 1), "disk_kb_per_trial": round(disk / trials / 1024, 1),
        "projected_index_gb_per_100k": round(disk / trials * 100_000 / 2**30, 2),
        "projected_index_gb_for_550k": round(disk / trials * REGISTRY / 2**30, 2),
        "machine": platform.processor() or platform.machine(),
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
