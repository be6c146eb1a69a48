"""Benchmark: ``medlink.spark.link_to_parquet`` over a million repeat-heavy rows on a local Spark session.

The rows are the condition strings of the shared ClinicalTrials.gov records drawn with replacement (what a data
lake of trial records looks like: few distinct strings, many repeats), linked with the embedded default
(exact → dense) and written to Parquet in a temporary folder. The default index is built before the clock
starts; each Python worker loads its own linker inside the timed run. Prints JSON.

    python benchmarks/spark_link.py [--rows 1000000] [--master local[2]] [--partitions 8]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from workloads import condition_strings, repeat_heavy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=8)
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from medlink.linking.defaults import default_index
    from medlink.spark import link_to_parquet

    default_index(progress=False)
    strings = condition_strings()
    mentions = repeat_heavy(strings, args.rows)
    spark = (SparkSession.builder.master(args.master).config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "4g").getOrCreate())  # fmt: skip
    df = spark.createDataFrame([(i, m) for i, m in enumerate(mentions)], "id long, mention string").cache()
    df.count()  # the rows exist in Spark before the clock starts
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        summary = link_to_parquet(df, "mention", Path(folder) / "linked", partitions=args.partitions)
        seconds = time.perf_counter() - started
    spark.stop()
    print(json.dumps({"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                      "master": args.master, "rows": args.rows, "distinct": len(set(mentions)),
                      "partitions": args.partitions, "seconds": round(seconds, 1),
                      "rows_per_second": round(args.rows / seconds), **summary}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
