"""Benchmark: ``medlink.spark.link_to_parquet`` over a million repeat-heavy rows on a local Spark session.

The rows are the condition strings of the shared ClinicalTrials.gov records drawn with replacement (what a data
lake of trial records looks like: few distinct strings, many repeats), linked with the embedded default
(exact → dense) and written to Parquet in a temporary folder. The default index is built before the clock
starts; each Python worker loads its own linker inside the timed run. Prints JSON.

With ``--terminology DIR`` (a compiled terminology, e.g. the 4 M-concept UMLS-size release of
``benchmarks/umls_scale.py --work``) the rows are names of its concepts drawn at random, half of them with a word
added, linked with ``--exact-only`` or against ``--index``. The Python workers' memory is sampled from /proc while
the job runs (peak resident set, and how much of it is their own rather than mapped files), since the store's pages
are shared between workers through the page cache.

    python benchmarks/spark_link.py [--rows 1000000] [--master local[2]] [--partitions 8]
    python benchmarks/spark_link.py --terminology DIR/compiled-4000000-15000000 --exact-only --rows 200000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path

from workloads import condition_strings, repeat_heavy


class WorkerMemory:
    """Samples the Python workers Spark starts (``pyspark.daemon`` and its forks) every ``interval`` seconds."""

    def __init__(self, interval: float = 0.2) -> None:
        self.peaks: dict[int, dict[str, int]] = {}
        self._interval, self._stop = interval, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            for pid in (int(name) for name in os.listdir("/proc") if name.isdigit()):
                try:
                    command = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if b"pyspark.daemon" not in command and b"pyspark.worker" not in command:  # not the JVM
                        continue
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:  # the process ended between listing and reading
                    continue
                fields = {
                    line.split(":")[0]: int(line.split()[1]) // 1024
                    for line in status.splitlines()
                    if line.startswith(("VmRSS:", "RssAnon:", "RssFile:"))
                }
                peak = self.peaks.setdefault(pid, {})
                for field, mb in fields.items():
                    peak[field] = max(peak.get(field, 0), mb)

    def summary(self) -> dict[str, int]:
        workers = [peak for peak in self.peaks.values() if peak]
        return {
            "python_workers_seen": len(workers),
            "worker_peak_rss_mb": max((peak["VmRSS"] for peak in workers), default=0),
            "worker_peak_private_mb": max((peak["RssAnon"] for peak in workers), default=0),
            "worker_peak_mapped_file_mb": max((peak["RssFile"] for peak in workers), default=0),
        }


def terminology_mentions(folder: Path, count: int, seed: int = 13) -> list[str]:
    """``count`` names of random concepts of the compiled terminology in ``folder``, every other one with a word
    added (no concept has that name); drawn from 20,000 distinct strings so that the stream repeats."""
    import random

    from medlink.terminology import load_terminology

    terminology = load_terminology(folder)
    generator = random.Random(seed)
    rows = [generator.randrange(len(terminology)) for _ in range(10_000)]
    names = [terminology.concepts.at("preferred_name", row) for row in rows]
    return repeat_heavy(names + [f"{name} variant" for name in names], count, seed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--terminology", type=Path, help="a compiled terminology to link to (default: embedded)")
    parser.add_argument("--index", type=Path, help="a vector index built over --terminology")
    parser.add_argument("--exact-only", action="store_true")
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from medlink.linking.defaults import descriptors_index
    from medlink.spark import link_to_parquet

    if args.terminology:
        mentions = terminology_mentions(args.terminology, args.rows)
    else:
        descriptors_index(progress=False)
        mentions = repeat_heavy(condition_strings(), args.rows)
    spark = (
        SparkSession.builder.master(args.master)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    df = spark.createDataFrame([(i, m) for i, m in enumerate(mentions)], "id long, mention string").cache()
    df.count()  # the rows exist in Spark before the clock starts
    with tempfile.TemporaryDirectory() as folder, WorkerMemory() as memory:
        started = time.perf_counter()
        summary = link_to_parquet(
            df,
            "mention",
            Path(folder) / "linked",
            partitions=args.partitions,
            index=args.index,
            terminology=args.terminology,
            exact_only=args.exact_only,
        )
        seconds = time.perf_counter() - started
        linked = spark.read.parquet(str(Path(folder) / "linked"))
        found = linked.filter(linked.concept_id.isNotNull()).count()
    spark.stop()
    print(
        json.dumps(
            {
                "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                "master": args.master,
                "rows": args.rows,
                "distinct": len(set(mentions)),
                "partitions": args.partitions,
                "seconds": round(seconds, 1),
                "rows_per_second": round(args.rows / seconds),
                "linked_rows": found,
                "terminology": str(args.terminology or "embedded"),
                "index": str(args.index or "default"),
                "exact_only": args.exact_only,
                **memory.summary(),
                **summary,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
