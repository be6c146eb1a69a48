"""Hostile-load benchmark of ``medlink serve`` (issues 38 and 61): ordinary clients while one client sends the worst
requests it can. 127.0.0.1 only; every loop is bounded in count and time.

Starts ``medlink serve`` (the embedded default) on a free local port. Phases of ``--seconds`` each: first
``--clients`` ordinary clients alone (``POST /v1/link`` with 1 to 4 condition strings, 5 % misspelled, as in
service_load.py), then the same clients while one attacker sends, back to back, one of:

- ``mentions`` (issue 38): requests of ``--max-batch`` mentions of ``max_mention_chars`` characters each, every
  mention distinct text (nothing cached, everything encoded);
- ``families`` (issue 61): every family of ``medlink.benchmark.hostile_text`` (the complexity test's) at the
  limit of every text the service reads: a link request's document, an annotated document, a trial record's
  intervention name, conditions, summary and eligibility criteria, and the Cookie header; plus the two shapes
  issue 61 named (10,000 short-form definitions in a document; an intervention of "a", 10,000 blanks and "b").

Reports the ordinary clients' p50 / p99 and errors in each phase, and what the attacker got (status codes,
slowest answer). Targets: with the attacker, ordinary p99 ≤ 1 s and no errors; the attacker answered 4xx or 503
within its budget + 2 s.

    python benchmarks/hostile_load.py [--attack mentions families] [--clients 20] [--seconds 60]
                                      [--max-batch 1000] [--request-seconds 10] [--workers N]
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
from pathlib import Path

import aiohttp
import httpx
from service_load import bodies, ordinary_clients

from medlink.linking import LinkerConfig

STUDY = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "trials" / "api_v2_study.json"


def family_requests(study: dict) -> Iterator[tuple[str, dict, dict]]:
    """(route, body, headers) of every family at the limit of every text the service reads, round after round."""
    from medlink.benchmark.hostile_text import FAMILIES
    from medlink.serve.schemas import MOST_NAMES, NAME_CHARS, PROSE_CHARS
    from medlink.serve.settings import ServiceSettings

    document_chars = ServiceSettings().max_document_chars
    named = {"mentions": ["x"], "document": "x(Q0001)y " * 10_000}  # issue 61's first shape
    spaced = _record(study, interventions=[{"type": "DRUG", "name": "a" + " " * 10_000 + "b"}])  # and its second
    while True:
        yield "/v1/link", named, {}
        yield "/v1/trials/normalize", {"records": [spaced]}, {}
        for family in FAMILIES.values():
            yield "/v1/link", {"mentions": ["asthma"], "document": family(document_chars)}, {}
            yield "/v1/annotate", {"documents": [{"text": family(document_chars)}]}, {}
            name = family(NAME_CHARS)
            records = [
                _record(study, interventions=[{"type": "DRUG", "name": name}]),
                _record(study, conditions=[name] * (MOST_NAMES // 4)),
                _record(study, summary=family(PROSE_CHARS), criteria=family(PROSE_CHARS)),
            ]
            yield "/v1/trials/normalize", {"records": records}, {}
            cookie = family(8_000).encode("utf-8").decode("latin-1")  # a header carries bytes; aiohttp wants str
            yield "/v1/link", {"mentions": ["asthma"]}, {"Cookie": cookie}


def _record(study: dict, **fields: object) -> dict:
    record = json.loads(json.dumps(study))
    section = record["protocolSection"]
    if "interventions" in fields:
        section.setdefault("armsInterventionsModule", {})["interventions"] = fields["interventions"]
    if "conditions" in fields:
        section.setdefault("conditionsModule", {})["conditions"] = fields["conditions"]
    if "summary" in fields:
        section.setdefault("descriptionModule", {})["briefSummary"] = fields["summary"]
    if "criteria" in fields:
        section.setdefault("eligibilityModule", {})["eligibilityCriteria"] = fields["criteria"]
    return record


def hostile_bodies(count: int, mentions: int, characters: int) -> Iterator[tuple[str, dict, dict]]:
    """Requests at the limits, made as they are sent: ``mentions`` distinct texts of ``characters`` characters."""
    generator = random.Random(13)
    words = ["lorem", "ipsum", "dolor", "sit", "amet", "fibro", "cardio", "itis", "osis", "emia", "neuro", "path"]
    for request in range(count):
        texts = []
        for mention in range(mentions):
            text = f"r{request}m{mention} " + " ".join(generator.choice(words) for _ in range(characters // 4))
            texts.append(text[:characters])
        yield "/v1/link", {"mentions": texts}, {}


async def attacker(
    session: aiohttp.ClientSession, work: Iterator[tuple[str, dict, dict]], seconds: float
) -> tuple[Counter, float]:
    """Sends ``work`` (route, body, headers) back to back for ``seconds``: the statuses it got, its slowest answer."""
    statuses: Counter = Counter()
    slowest = 0.0
    deadline = time.monotonic() + seconds
    for route, body, headers in work:
        if time.monotonic() > deadline:
            break
        started = time.perf_counter()
        try:
            async with session.post(route, json=body, headers=headers) as response:
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
    connector = aiohttp.TCPConnector(limit=args.clients + 2)
    timeout = aiohttp.ClientTimeout(total=120)
    result: dict = {}
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as session:
        alone = await ordinary_clients(session, ordinary[:20_000], args.clients, args.seconds)
        result["ordinary_alone"] = summary(*alone)
        for number, attack in enumerate(args.attack, start=1):
            if attack == "mentions":
                work = hostile_bodies(10_000, args.max_batch, limit)
            else:
                work = family_requests(json.loads(STUDY.read_text()))
            attacking = attacker(session, work, args.seconds)
            share = ordinary[20_000 * number : 20_000 * (number + 1)]
            attacked, (statuses, slowest) = await asyncio.gather(
                ordinary_clients(session, share, args.clients, args.seconds), attacking
            )
            result[f"ordinary_with_{attack}"] = summary(*attacked)
            result[f"attacker_{attack}"] = {
                "statuses": {str(k): v for k, v in statuses.items()},
                "slowest_s": round(slowest, 2),
            }
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-batch", type=int, default=1000)
    parser.add_argument("--request-seconds", type=float, default=10)
    parser.add_argument("--attack", nargs="+", choices=("mentions", "families"), default=["mentions", "families"])
    parser.add_argument("--workers", type=int, default=None, help="the service's --workers (default: its own)")
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
        *(("--workers", str(args.workers)) if args.workers is not None else ()),
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
            workers=args.workers,
        )
        print(json.dumps(result, indent=2))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
