"""Hostile-load benchmark of ``medlink serve`` (issue 38): ordinary clients while one client sends the worst requests
the limits allow. 127.0.0.1 only; every loop is bounded in count and time.

Starts ``medlink serve`` (the embedded default) on a free local port. Two phases of ``--seconds`` each: first
``--clients`` ordinary clients alone (``POST /v1/link`` with 1 to 4 condition strings, 5 % misspelled, as in
service_load.py), then the same clients while one attacker sends, back to back, requests of ``--max-batch`` mentions
of ``max_mention_chars`` characters each, every mention distinct text (nothing cached, everything encoded). Reports
the ordinary clients' p50 / p99 and errors in both phases, and what the attacker got (status codes, slowest
answer). Issue 38's target: with the attacker, ordinary p99 ≤ 1 s and no errors; the attacker gets 4xx / 503
within its time budget.

    python benchmarks/hostile_load.py [--clients 20] [--seconds 60] [--max-batch 1000] [--request-seconds 10]
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
import time
from collections import Counter
from collections.abc import Iterator

import aiohttp
import httpx
from service_load import bodies, ordinary_clients

from medlink.linking import LinkerConfig


def hostile_bodies(count: int, mentions: int, characters: int) -> Iterator[dict]:
    """Requests at the limits, made as they are sent: ``mentions`` distinct texts of ``characters`` characters."""
    generator = random.Random(13)
    words = ["lorem", "ipsum", "dolor", "sit", "amet", "fibro", "cardio", "itis", "osis", "emia", "neuro", "path"]
    for request in range(count):
        texts = []
        for mention in range(mentions):
            text = f"r{request}m{mention} " + " ".join(generator.choice(words) for _ in range(characters // 4))
            texts.append(text[:characters])
        yield {"mentions": texts}


async def attacker(session: aiohttp.ClientSession, work: Iterator[dict], seconds: float) -> tuple[Counter, float]:
    statuses: Counter = Counter()
    slowest = 0.0
    deadline = time.monotonic() + seconds
    for body in work:
        if time.monotonic() > deadline:
            break
        started = time.perf_counter()
        try:
            async with session.post("/v1/link", json=body) as response:
                await response.read()
                statuses[response.status] += 1
        except (aiohttp.ClientError, TimeoutError) as error:
            statuses[type(error).__name__] += 1
        slowest = max(slowest, time.perf_counter() - started)
    return statuses, slowest


def summary(latencies: list[float], errors: int) -> dict:
    latencies = sorted(latencies)
    return {
        "requests": len(latencies),
        "errors": errors,
        "p50_ms": round(1000 * latencies[len(latencies) // 2], 1),
        "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99)], 1),
    }


async def phases(url: str, args: argparse.Namespace) -> dict:
    ordinary = bodies(60_000, 0.05)
    limit = LinkerConfig().max_mention_chars
    hostile = hostile_bodies(10_000, args.max_batch, limit)
    connector = aiohttp.TCPConnector(limit=args.clients + 2)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as session:
        alone = await ordinary_clients(session, ordinary[:40_000], args.clients, args.seconds)
        attacked, (statuses, slowest) = await asyncio.gather(
            ordinary_clients(session, ordinary[40_000:], args.clients, args.seconds),
            attacker(session, hostile, args.seconds),
        )
    return {
        "ordinary_alone": summary(*alone),
        "ordinary_with_attacker": summary(*attacked),
        "attacker": {
            "statuses": {str(k): v for k, v in statuses.items()},
            "slowest_s": round(slowest, 2),
            "mentions_per_request": args.max_batch,
            "characters_per_mention": limit,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-batch", type=int, default=1000)
    parser.add_argument("--request-seconds", type=float, default=10)
    args = parser.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "medlink",
        "serve",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--max-batch",
        str(args.max_batch),
        "--request-seconds",
        str(args.request_seconds),
    ]
    server = subprocess.Popen(command)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.5)
        result = asyncio.run(phases(url, args))
        result.update(
            machine=f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            clients=args.clients,
            seconds_per_phase=args.seconds,
            request_seconds=args.request_seconds,
        )
        print(json.dumps(result, indent=2))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
