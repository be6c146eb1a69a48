"""Benchmark: compile MeSH descriptors + supplementary concepts, then load the compiled folder in fresh processes.

Target (issue 2): load in < 3 s with < 1.5 GB RSS. Each load runs in a new Python process so nothing is cached in
memory, and "ready" includes building the normalized-name index with the first lookup.

    python benchmarks/terminology_load.py [--shared ../shared] [--repeats 3] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_LOAD = """
import json, sys, time


def peak_mb():
    # VmHWM belongs to this address space; ru_maxrss would carry over the parent's peak through fork and exec
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024


started = time.perf_counter()
from medlink.terminology import load_terminology
terminology = load_terminology(sys.argv[1])
loaded = time.perf_counter()
matches = terminology.lookup("heart attack")
ready = time.perf_counter()
print(json.dumps({"load_s": loaded - started, "ready_s": ready - started,
                  "rss_mb": peak_mb(),
                  "concepts": len(terminology), "names": terminology.name_count,
                  "heart_attack": [m.concept_id for m in matches]}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table row set for docs/")
    args = parser.parse_args()
    mesh = args.shared / "data/terminologies/mesh"
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "mesh"
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "medlink",
                "terminology",
                "compile",
                f"mesh-desc-tsv:{mesh / 'mesh_descriptors.tsv.gz'}",
                f"mesh-supp-tsv:{mesh / 'mesh_supplementary.tsv.gz'}",
                "-o",
                str(target),
            ],
            check=True,
            capture_output=True,
        )
        compile_s = time.perf_counter() - started
        size_mb = sum(p.stat().st_size for p in target.iterdir()) / 1e6
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", _LOAD, str(target)], check=True, capture_output=True, text=True
                ).stdout
            )
            for _ in range(args.repeats)
        ]
    first = runs[0]
    summary = {
        "concepts": first["concepts"],
        "names": first["names"],
        "compile_s": round(compile_s, 1),
        "size_mb": round(size_mb, 1),
        "load_s_median": round(statistics.median(r["load_s"] for r in runs), 2),
        "ready_s_median": round(statistics.median(r["ready_s"] for r in runs), 2),
        "rss_mb_max": round(max(r["rss_mb"] for r in runs)),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
    }
    if args.markdown:
        print("| concepts | names | compile | on disk | load | load + name index | peak RSS |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        print(
            f"| {summary['concepts']:,} | {summary['names']:,} | {summary['compile_s']} s | {summary['size_mb']} MB "
            f"| {summary['load_s_median']} s | {summary['ready_s_median']} s | {summary['rss_mb_max']} MB |"
        )
    else:
        print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
