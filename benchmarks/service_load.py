"""Load benchmark of ``medlink serve``: concurrent clients against 127.0.0.1, bounded in count and time.

Starts ``medlink serve`` (the embedded default) on a free local port, waits for /health, then ``--clients``
asyncio clients send ``--requests`` requests in all, each ``POST /v1/link`` with 1 to 4 mentions drawn from a
repeat-heavy stream of the shared ClinicalTrials.gov condition strings (5 % with a misspelled mention, so the
dense sieve works too). Reports errors, requests/s, p50 / p99 latency and the server's resident memory before and after;
stops the server with SIGTERM. Traffic goes to 127.0.0.1 only.

    python benchmarks/service_load.py [--clients 50] [--requests 10000] [--max-seconds 900]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import threading
import time

import aiohttp
import httpx
from workloads import condition_strings, repeat_heavy


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def misspell(text: str, generator: random.Random) -> str:
    if len(text) < 6:
        return text
    at = generator.randrange(1, len(text) - 2)
    return text[:at] + text[at + 1] + text[at] + text[at + 2 :]


def bodies(count: int, misspelled: float) -> list[dict]:
    strings = condition_strings()
    generator = random.Random(7)
    stream = iter(repeat_heavy(strings, count * 4))
    out = []
    for _ in range(count):
        mentions = [next(stream) for _ in range(generator.randint(1, 4))]
        if generator.random() < misspelled:
            mentions[0] = misspell(mentions[0], generator)
        out.append({"mentions": mentions})
    return out


async def run_clients(url: str, work: list[dict], clients: int, max_seconds: float) -> tuple[list[float], int]:
    """``clients`` coroutines on one keep-alive connection pool take the requests in turn (aiohttp: the client
    must cost less than the server, or it measures itself; httpx's async client spent 3 ms of CPU a request)."""
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(url, connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:
        return await ordinary_clients(session, work, clients, max_seconds)


async def ordinary_clients(
    session: aiohttp.ClientSession, work: list[dict], clients: int, seconds: float
) -> tuple[list[float], int]:
    """Latencies and the count of failed answers of ``clients`` coroutines sending ``work`` for ``seconds``."""
    pending = iter(work)
    latencies: list[float] = []
    errors = 0
    deadline = time.monotonic() + seconds

    async def one_client() -> None:
        nonlocal errors
        for body in pending:
            if time.monotonic() > deadline:
                return
            started = time.perf_counter()
            try:
                async with session.post("/v1/link", json=body) as response:
                    payload = await response.json()
                    ok = response.status == 200 and len(payload["results"]) == len(body["mentions"])
            except (aiohttp.ClientError, TimeoutError):
                ok = False
            latencies.append(time.perf_counter() - started)
            errors += not ok

    await asyncio.gather(*(one_client() for _ in range(clients)))
    return latencies, errors


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--max-seconds", type=float, default=900)
    parser.add_argument("--misspelled", type=float, default=0.05, help="share of requests with a misspelled mention")
    args = parser.parse_args()
    work = bodies(args.requests, args.misspelled)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "medlink", "serve", "--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen(command)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                if server.poll() is not None:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.5)
        before = rss_mb(server.pid)
        samples: list[float] = []
        sampling = threading.Event()

        def sample() -> None:  # the server's memory every 10 s, to see whether it keeps growing
            while not sampling.wait(10):
                samples.append(round(rss_mb(server.pid)))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.perf_counter()
        latencies, errors = asyncio.run(run_clients(url, work, args.clients, args.max_seconds))
        seconds = time.perf_counter() - started
        sampling.set()
        after = rss_mb(server.pid)
        latencies.sort()
        print(
            json.dumps(
                {
                    "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                    "clients": args.clients,
                    "misspelled_share": args.misspelled,
                    "requests_sent": len(latencies),
                    "requests_planned": args.requests,
                    "errors": errors,
                    "seconds": round(seconds, 1),
                    "requests_per_second": round(len(latencies) / seconds),
                    "p50_ms": round(1000 * latencies[len(latencies) // 2], 1),
                    "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99)], 1),
                    "server_rss_mb_before": round(before),
                    "server_rss_mb_after": round(after),
                    "server_rss_mb_every_10s": samples,
                },
                indent=2,
            )
        )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
