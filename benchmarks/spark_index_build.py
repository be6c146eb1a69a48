"""Benchmark: encoding a terminology's names on Spark, local[1] against local[2] (issue 37).

Builds the same index twice with ``medlink.spark.build_index`` (one encoder per Python worker, one thread per task),
each from an empty work folder and in a fresh Spark session, and reports wall time, names/s and the speed-up.

    python benchmarks/spark_index_build.py --terminology MEDIC_DIR [--encoder medlink --quantize int8]

Target: local[2] ≥ 1.7× local[1] on the same names.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_BUILD = """
import json, sys, time
from pyspark.sql import SparkSession
from medlink.spark import build_index
master, terminology, output, encoder, quantize = sys.argv[1:6]
spark = (SparkSession.builder.master(master).config("spark.ui.enabled", "false")
         .config("spark.python.worker.reuse", "true").getOrCreate())
spark.sparkContext.parallelize([0], 1).count()  # the JVM and first Python worker start outside the timing
started = time.perf_counter()
counts = build_index(spark, terminology, output, encoder=encoder, quantize=quantize)
print(json.dumps({"seconds": time.perf_counter() - started, **counts}))
spark.stop()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--terminology", type=Path, required=True, help="a compiled terminology folder")
    parser.add_argument("--encoder", default="medlink")
    parser.add_argument("--quantize", default="int8")
    args = parser.parse_args()
    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        for master in ("local[1]", "local[2]"):
            output = Path(scratch) / master.replace("[", "-").rstrip("]")
            out = subprocess.run(
                [sys.executable, "-c", _BUILD, master, str(args.terminology), str(output), args.encoder, args.quantize],
                check=True,
                capture_output=True,
                text=True,
                env={**os.environ, "PYSPARK_PYTHON": sys.executable},
            ).stdout
            runs[master] = json.loads(out.strip().splitlines()[-1])
    names = runs["local[1]"]["names"]
    record = {
        "names": names,
        "encoder": f"{args.encoder} {args.quantize}",
        "cores": os.cpu_count(),
        **{f"{master}_s": round(run["seconds"], 1) for master, run in runs.items()},
        **{f"{master}_encode_s": run["encode_seconds"] for master, run in runs.items()},
        **{f"{master}_names_per_s": round(names / run["encode_seconds"]) for master, run in runs.items()},
        "encode_speedup": round(runs["local[1]"]["encode_seconds"] / runs["local[2]"]["encode_seconds"], 2),
        "speedup": round(runs["local[1]"]["seconds"] / runs["local[2]"]["seconds"], 2),
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
