"""Benchmark: linking speed of Chinese strings (CHIP-CDN dev, the set ranker) against English ones (NCBI-disease
test, the embedded default linker), warm, on this machine.

Target (issue 19): Chinese within 1.5x of English. "Warm": terminologies, index, encoder and ranker are loaded
and one mention linked before the clock starts; result caches are cleared, so every distinct string is linked
inside the timed run. Prints JSON.

    python benchmarks/chinese_linking.py --ranker RANKER_DIR --terminology ICD_BJ_DIR
    # RANKER_DIR from: medlink train set-ranker --terminology ICD_BJ_DIR --mentions chip-cdn:…/CHIP-CDN_train.json -o …
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path

from medlink.evaluation.corpus_formats import load_corpus
from medlink.linking import Linker
from medlink.linking.defaults import descriptors_index
from medlink.linking.spec import SetRanked

SHARED = Path(__file__).resolve().parents[1].parent / "shared/data/corpora"


def timed(make: Callable[[], Linker], texts: list[str], repeats: int) -> float:
    """Mentions per second, best of ``repeats`` runs, each with a fresh linker (no cached results or vectors)
    warmed by one mention outside ``texts``."""
    best = float("inf")
    for _ in range(repeats):
        linker = make()
        linker.link("warm-up")
        start = time.perf_counter()
        linker.link_many(texts)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranker", type=Path, required=True)
    parser.add_argument("--terminology", type=Path, required=True, help="the ranker's compiled ICD-10 terminology")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    chinese = sorted({m.text for m in load_corpus(f"chip-cdn:{SHARED}/chip-cdn/CHIP-CDN_dev.json")})
    english = sorted({m.text for m in load_corpus(f"pubtator:{SHARED}/ncbi-disease/NCBItestset_corpus.txt")})
    zh = timed(lambda: Linker.load(SetRanked(args.ranker, args.terminology)), chinese, args.repeats)
    folder = descriptors_index()
    en = timed(lambda: Linker.load(folder), english, args.repeats)
    print(
        json.dumps(
            {
                "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}",
                "chinese": {"mentions": len(chinese), "per_second": round(zh, 1), "linker": "set ranker"},
                "english": {"mentions": len(english), "per_second": round(en, 1), "linker": "embedded default (dense)"},
                "english_over_chinese": round(en / zh, 2),
                "target": "<= 1.5",
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
