"""Benchmark: how fast repeated mentions come back from the linker's results cache (issue 20: >= 100k/s).

The embedded default linker first links every distinct condition string of the shared ClinicalTrials.gov records
(untimed: that is encoding, measured elsewhere), then the timed part links a repeat-heavy stream of them, one
``link`` call per mention and again as ``link_many`` batches of 4,096. Prints JSON.

    python benchmarks/repeated_mentions.py [--mentions 1000000]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

from workloads import condition_strings, repeat_heavy

from medlink import Linker


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mentions", type=int, default=1_000_000)
    args = parser.parse_args()
    strings = condition_strings()
    stream = repeat_heavy(strings, args.mentions)
    linker = Linker.load()
    linker.link_many(list(dict.fromkeys(strings)))  # every distinct string decided once, untimed
    started = time.perf_counter()
    for mention in stream:
        linker.link(mention)
    single = time.perf_counter() - started
    started = time.perf_counter()
    for start in range(0, len(stream), 4096):
        linker.link_many(stream[start : start + 4096])
    batched = time.perf_counter() - started
    print(
        json.dumps(
            {
                "machine": f"{platform.machine()}, {platform.python_version()}",
                "mentions": len(stream),
                "distinct": len(set(strings)),
                "link_per_second": round(len(stream) / single),
                "link_many_per_second": round(len(stream) / batched),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
