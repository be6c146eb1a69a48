"""Memory of ``medlink serve`` (the embedded default) with 0 (threads in one process), 1, 2 and 4 worker processes
(issue 61). 127.0.0.1 only.

Each service is started, warmed by the work a service does (links that reach the dense index, an annotation and a
trial normalization, on every worker), then measured: the proportional set size (PSS: a page shared by k processes
counts 1/k to each) summed over the service and its workers, which is what the machine spends, and the resident
sizes for comparison (RSS counts a shared page in every process).

    python benchmarks/service_memory.py [--workers 0 1 2 4]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

STUDY = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "trials" / "api_v2_study.json"
WARM_MENTIONS = ["myocardal infarction", "hypertensoin", "diabetis mellitus type 2", "chronic kidney diseas"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tree(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        # per thread: a worker started from one of the service's threads is that thread's child
        below = [int(child) for task in Path(f"/proc/{parent}/task").glob("*") for child in _children(task)]
        found += below
        frontier += below
    return found


def _children(task: Path) -> list[str]:
    try:
        return (task / "children").read_text().split()
    except OSError:  # the thread ended meanwhile
        return []


def memory_mb(pids: list[int]) -> dict[str, float]:
    totals = {"pss_mb": 0.0, "rss_mb": 0.0}
    for pid in pids:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name, value = line.split()[:2]
            if name == "Pss:":
                totals["pss_mb"] += int(value) / 1024
            elif name == "Rss:":
                totals["rss_mb"] += int(value) / 1024
    return {key: round(value, 1) for key, value in totals.items()}


def measure(workers: int) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "medlink", "serve", "--port", str(port), "--workers", str(workers)]
    server = subprocess.Popen([*command, "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        started = time.monotonic()
        while True:
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        ready = time.monotonic() - started
        study = json.loads(STUDY.read_text())
        for round_ in range(max(1, workers) * 2):  # every worker gets some of each kind of work
            mentions = [f"{mention} {round_}" for mention in WARM_MENTIONS]
            httpx.post(f"{url}/v1/link", json={"mentions": mentions}, timeout=120).raise_for_status()
            text = "No evidence of asthma; chronic kidney disease (CKD) and type 2 diabetes."
            httpx.post(f"{url}/v1/annotate", json={"documents": [{"text": text}]}, timeout=120).raise_for_status()
            httpx.post(f"{url}/v1/trials/normalize", json={"records": [study]}, timeout=300).raise_for_status()
        pids = tree(server.pid)
        return {"workers": workers, "processes": len(pids), "ready_s": round(ready, 1), **memory_mb(pids)}
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2, 4])
    args = parser.parse_args()
    rows = [measure(count) for count in args.workers]
    one = next((row for row in rows if row["workers"] == 0), None)
    for row in rows:
        if one:
            row["pss_vs_one_process"] = round(row["pss_mb"] / one["pss_mb"], 2)
        print(json.dumps(row), flush=True)
    print(json.dumps({"machine": platform.platform(), "cores": os.cpu_count()}))


if __name__ == "__main__":
    main()
