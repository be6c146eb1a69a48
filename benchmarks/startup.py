"""Start-up of one-shot use, whole process: what a shell script, ``xargs`` or a notebook calling the CLI pays per call.

    python benchmarks/startup.py [--runs 7] [--json startup.json]

Each command runs ``--runs`` times after one warm-up run (which also builds the default index into the cache when it
is missing, untimed); the table gives the median and the slowest wall time and the median peak memory (the child's
maximum resident set, from ``wait4``). Issue 45's targets: ``medlink link "heart attack"`` ≤ 0.8 s and ≤ 250 MB, a
misspelled term ≤ 1.5 s, ``import medlink`` ≤ 0.3 s. Run it alone on the machine: anything else on the cores shows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

MEDLINK = str(Path(sys.executable).with_name("medlink"))
COMMANDS = {
    "medlink --help": [MEDLINK, "--help"],
    'medlink link "heart attack" (exact)': [MEDLINK, "link", "heart attack"],
    'medlink link "myocardial infarctoin" (dense)': [MEDLINK, "link", "myocardial infarctoin"],
    'medlink link --exact-only "heart attack"': [MEDLINK, "link", "--exact-only", "heart attack"],
    'python -c "import medlink"': [sys.executable, "-c", "import medlink"],
}


def run_once(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one run of ``command``."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {child.stderr.read().decode() if child.stderr else ''}")
    return seconds, usage.ru_maxrss / 1024  # KB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args()
    rows = {}
    for name, command in COMMANDS.items():
        run_once(command)  # warm: caches built, files in the page cache
        runs = [run_once(command) for _ in range(args.runs)]
        seconds = [s for s, _ in runs]
        rows[name] = {"median_s": round(statistics.median(seconds), 3), "max_s": round(max(seconds), 3),
                      "peak_mb": round(statistics.median(m for _, m in runs))}  # fmt: skip
    print(f"| command (median of {args.runs}, warm cache) | wall s | slowest s | peak MB |")
    print("|---|---:|---:|---:|")
    for name, row in rows.items():
        print(f"| `{name}` | {row['median_s']:.2f} | {row['max_s']:.2f} | {row['peak_mb']} |")
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "commands": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
