"""Start-up of one-shot use, whole process: what a shell script, ``xargs`` or a notebook calling the CLI pays per call.

    python benchmarks/startup.py [--runs 7] [--json startup.json]

Each command runs ``--runs`` times after one warm-up run (which also builds the default index into the cache when it
is missing, untimed); the table gives the median and the slowest wall time and the median peak memory (the child's
maximum resident set, from ``wait4``). Issue 45's targets: ``medlink link "heart attack"`` ≤ 0.8 s and ≤ 250 MB, a
misspelled term ≤ 1.5 s, ``import medlink`` ≤ 0.3 s. Then the first use on an empty cache (a fresh ``MEDLINK_CACHE``
each run, the files still in the page cache), as a new user meets it; issue 57's target: the first dense answer
≤ 20 s. Run it alone on the machine: anything else on the cores shows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
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
FIRST_USES = {
    'medlink link "myocardial infarctoin" (dense)': [MEDLINK, "link", "myocardial infarctoin"],
    'a script: medlink.link("heart attack")': [
        sys.executable,
        "-c",
        "import medlink; print(medlink.link('heart attack').concept_id)",
    ],
}


def run_once(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one run of ``command``."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {child.stderr.read().decode() if child.stderr else ''}")
    return seconds, usage.ru_maxrss / 1024  # KB on Linux


def summary(runs: list[tuple[float, float]]) -> dict[str, float]:
    seconds = [s for s, _ in runs]
    return {
        "median_s": round(statistics.median(seconds), 3),
        "max_s": round(max(seconds), 3),
        "peak_mb": round(statistics.median(m for _, m in runs)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args()
    rows = {}
    for name, command in COMMANDS.items():
        run_once(command)  # warm: caches built, files in the page cache
        rows[name] = summary([run_once(command) for _ in range(args.runs)])
    print(f"| command (median of {args.runs}, warm cache) | wall s | slowest s | peak MB |")
    print("|---|---:|---:|---:|")
    for name, row in rows.items():
        print(f"| `{name}` | {row['median_s']:.2f} | {row['max_s']:.2f} | {row['peak_mb']} |")
    first = {}
    for name, command in FIRST_USES.items():
        runs = []
        for _ in range(3):
            with tempfile.TemporaryDirectory(prefix="medlink-empty-cache-") as cache:
                runs.append(run_once(command, {**os.environ, "MEDLINK_CACHE": cache}))
        first[name] = summary(runs)
    print("\n| first use (median of 3, empty cache each) | wall s | slowest s | peak MB |")
    print("|---|---:|---:|---:|")
    for name, row in first.items():
        print(f"| `{name}` | {row['median_s']:.2f} | {row['max_s']:.2f} | {row['peak_mb']} |")
    if args.json:
        figures = {"runs": args.runs, "commands": rows, "first_use": first}
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
