"""Isolation (issue 61): work past its request's budget is stopped — its worker process killed and replaced — while
every other request goes on; a client that leaves stops its work; SIGTERM ends a service with work in flight
within a bound; requests addressed to a strange host or sent by another site's page are refused when no key is
set. A real uvicorn server on 127.0.0.1, the embedded default, real worker processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

httpx = pytest.importorskip("httpx", reason="the service tests need the [test] extras (httpx)")
pytest.importorskip("uvicorn", reason="the service tests need the [serve] extras")

from medlink import Linker  # noqa: E402
from medlink.serve.app import create_app  # noqa: E402
from medlink.serve.settings import ServiceSettings  # noqa: E402
from support import free_port, serving  # noqa: E402

pytestmark = pytest.mark.slow  # worker processes each load the embedded default

BUDGET = 3.0
# Work that takes far longer than the budget, and is no attack: five long documents to annotate (~10 s each).
HEAVY = {"documents": [{"text": ("Asthma, diabetes and chronic kidney disease were noted. " * 1800)[:99_000]}] * 5}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    settings = ServiceSettings(workers=2, request_seconds=BUDGET, worker_restarts_per_minute=100)
    yield from serving(create_app(Linker.load(), settings))


def _metric(url: str, name: str) -> float:
    lines = httpx.get(f"{url}/metrics").text.splitlines()
    return sum(float(line.split()[-1]) for line in lines if line.startswith(f"{name} ") or line.startswith(f"{name}{{"))


def _wait_for_workers(url: str, count: int) -> None:
    deadline = time.monotonic() + 60
    while httpx.get(f"{url}/health").json().get("idle_workers") != count:
        assert time.monotonic() < deadline, "the killed worker was not replaced"
        time.sleep(0.2)


def test_work_past_its_budget_is_stopped_and_every_other_request_goes_on(url: str) -> None:
    kills = _metric(url, "medlink_worker_kills_total")
    heavy: dict[str, object] = {}

    def send_heavy() -> None:
        started = time.monotonic()
        answer = httpx.post(f"{url}/v1/annotate", json=HEAVY, timeout=120)
        heavy.update(status=answer.status_code, seconds=time.monotonic() - started, body=answer.json())

    sender = threading.Thread(target=send_heavy)
    sender.start()
    time.sleep(0.5)
    slowest = 0.0
    for number in range(12):  # ordinary requests all the while, each with a mention never seen (it is encoded)
        started = time.monotonic()
        answer = httpx.post(f"{url}/v1/link", json={"mentions": [f"myocardial infarction {number}"]}, timeout=30)
        slowest = max(slowest, time.monotonic() - started)
        assert answer.status_code == 200 and len(answer.json()["results"]) == 1
        time.sleep(0.25)
    sender.join()
    assert heavy["status"] == 503 and "stopped" in str(heavy["body"]), heavy
    assert heavy["seconds"] <= BUDGET + 2  # type: ignore[operator]
    assert slowest <= 1.0
    assert _metric(url, "medlink_worker_kills_total") == kills + 1
    _wait_for_workers(url, 2)
    assert _metric(url, "medlink_worker_restarts_total") >= 1


def test_a_client_that_leaves_stops_its_work(url: str) -> None:
    _wait_for_workers(url, 2)
    kills = _metric(url, "medlink_worker_kills_total")
    with pytest.raises(httpx.TimeoutException):
        httpx.post(f"{url}/v1/annotate", json=HEAVY, timeout=1.0)
    deadline = time.monotonic() + BUDGET
    while _metric(url, "medlink_worker_kills_total") == kills:  # killed when the client left, before the budget
        assert time.monotonic() < deadline, "the work of a client that left went on"
        time.sleep(0.1)
    assert _metric(url, 'medlink_requests_total{route="/v1/annotate",status="499"}') >= 1
    _wait_for_workers(url, 2)


def test_a_linker_that_cannot_be_copied_runs_in_threads() -> None:
    from medlink.terminology import load_default_terminology

    assembled = Linker(load_default_terminology())  # made from parts: it does not pickle
    for health in _health_of(create_app(assembled, ServiceSettings(workers=2))):
        assert health["workers"] == 0


def _health_of(app: object) -> Iterator[dict]:
    for url in serving(app):
        yield httpx.get(f"{url}/health").json()


def test_without_a_key_other_hosts_and_other_sites_are_refused(url: str) -> None:
    port = url.rsplit(":", 1)[1]
    assert httpx.get(f"{url}/?q=asthma", headers={"Host": f"attacker.example:{port}"}).status_code == 400
    assert httpx.get(f"{url}/?q=asthma", headers={"Host": f"localhost:{port}"}).status_code == 200
    assert httpx.get(f"{url}/health", headers={"Host": f"probe.internal:{port}"}).status_code == 200  # shows nothing
    image = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
    assert httpx.get(f"{url}/?q=asthma", headers=image).status_code == 403  # another site's <img> makes no work
    followed = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
    assert httpx.get(f"{url}/?q=asthma", headers=followed).status_code == 200  # a shared link still opens
    form = {"note": "A 45-year-old man with asthma."}
    for headers in ({"Origin": "http://attacker.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}):
        assert httpx.post(f"{url}/trials", data=form, headers=headers).status_code == 403, headers
    own = httpx.post(f"{url}/trials", data=form, headers={"Origin": url, "Sec-Fetch-Site": "same-origin"})
    assert own.status_code == 404  # past the guard: this service has no trial index
    assert httpx.post(f"{url}/v1/link", json={"mentions": ["asthma"]}).status_code == 200  # no browser, no Origin


def test_the_page_cookie_holds_a_token_not_the_key() -> None:
    for url in serving(create_app(Linker.load(exact_only=True), ServiceSettings(workers=0, api_key="s3cret"))):
        plain = httpx.post(f"{url}/key", data={"key": "s3cret", "next": "/"})
        cookie = plain.headers["set-cookie"]
        assert plain.status_code == 303 and "s3cret" not in cookie and "secure" not in cookie.lower()
        behind_https = httpx.post(  # uvicorn takes X-Forwarded-Proto from 127.0.0.1, as from a local proxy
            f"{url}/key", data={"key": "s3cret", "next": "/"}, headers={"X-Forwarded-Proto": "https"}
        )
        assert "secure" in behind_https.headers["set-cookie"].lower()
        token = cookie.split(";", 1)[0].split("=", 1)[1]
        assert httpx.get(f"{url}/", cookies={"medlink_key": token}).status_code == 200
        assert httpx.get(f"{url}/", cookies={"medlink_key": "s3cret"}).status_code == 303  # the key is no session


def test_sigterm_ends_a_service_with_work_in_flight_within_its_budget() -> None:
    port, budget = free_port(), 3
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "medlink", "serve", "--port", str(port)),
            *("--workers", "1", "--request-seconds", str(budget), "--log-level", "warning"),
        ],
        env={name: value for name, value in os.environ.items() if name != "MEDLINK_API_KEY"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, process.stdout.read()  # type: ignore[union-attr]
                time.sleep(0.3)
        sender = threading.Thread(target=_ignore_errors, args=(f"{url}/v1/annotate",))
        sender.start()
        time.sleep(1.0)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=budget + 20)
        took = time.monotonic() - signalled
        assert took <= budget + 2, f"{took:.1f} s after SIGTERM"  # in a thread, the document's ~10 s ran on
        sender.join()
    finally:
        if process.poll() is None:
            process.kill()


def _ignore_errors(address: str) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the server goes away under it
        httpx.post(address, json=HEAVY, timeout=60)
