"""The REST service, through a real uvicorn server on 127.0.0.1 and real weights (the embedded default)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

httpx = pytest.importorskip("httpx", reason="the service tests need the [test] extras (httpx)")
uvicorn = pytest.importorskip("uvicorn", reason="the service tests need the [serve] extras")

from medlink import Linker  # noqa: E402
from medlink.serve.app import create_app  # noqa: E402
from medlink.serve.settings import ServiceSettings  # noqa: E402
from support import TRIALS, free_port, serving, two_trial_matcher  # noqa: E402

pytestmark = pytest.mark.slow  # the service links with the embedded default (its index: ~70 s)

STUDY = TRIALS / "api_v2_study.json"


@pytest.fixture(scope="module")
def linker() -> Linker:
    return Linker.load()


@pytest.fixture(scope="module")
def url(linker: Linker) -> Iterator[str]:
    settings = ServiceSettings(max_batch=50, max_body_bytes=64_000, max_document_chars=1_000)
    yield from serving(create_app(linker, settings))


@pytest.fixture(scope="module")
def keyed_url(linker: Linker) -> Iterator[str]:
    yield from serving(create_app(linker, ServiceSettings(api_key="s3cret")))


def test_link_batch_with_documents(url: str) -> None:
    body = {
        "mentions": [
            "heart attack",
            "myocardial infarctoin",
            {"text": "WD", "document": "Wilson disease (WD) is"},
            "WD",
            "",
        ],
        "document": "Patients with Wilson disease (WD).",
    }
    response = httpx.post(f"{url}/v1/link", json=body)
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["concepts"][:1] for r in results[:4]] == [
        ["MESH:D009203"],
        ["MESH:D009203"],
        ["MESH:D006527"],
        ["MESH:D006527"],
    ]
    assert results[1]["stage"] == "dense" and results[1]["candidates"]
    assert "abbreviation expanded" in results[3]["reason"]  # the shared document reached the plain mention
    assert results[4]["stage"] == "empty"


def test_concurrent_requests_are_batched_and_answered_in_order(url: str) -> None:
    texts = [f"myocardial infarction type {i}" for i in range(40)]

    def call(text: str) -> str:
        return httpx.post(f"{url}/v1/link", json={"mentions": [text]}, timeout=60).json()["results"][0]["mention"]

    with ThreadPoolExecutor(max_workers=20) as pool:
        assert list(pool.map(call, texts)) == texts
    metrics = httpx.get(f"{url}/metrics").text
    sizes = [line for line in metrics.splitlines() if line.startswith("medlink_link_batch_mentions_count")]
    total = [line for line in metrics.splitlines() if line.startswith("medlink_mentions_linked_total")]
    assert sizes and total
    assert float(sizes[0].split()[-1]) < float(total[0].split()[-1])  # fewer batches than mentions: gathered


def test_concepts_health_metrics_and_docs(url: str) -> None:
    concept = httpx.get(f"{url}/v1/concepts/MESH:D009203").json()
    assert concept["preferred_name"] == "Myocardial Infarction" and concept["names"][0]["kind"] == "preferred"
    unknown = httpx.get(f"{url}/v1/concepts/MESH:D999999999")
    assert unknown.status_code == 404 and "unknown concept id" in unknown.json()["error"]
    health = httpx.get(f"{url}/health").json()
    assert health["status"] == "ok" and health["concepts"] > 10_000 and health["linker"] == "embedded default"
    assert "/" not in json.dumps(health)  # open without a key: it names no path on the server
    metrics = httpx.get(f"{url}/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    assert 'medlink_requests_total{route="/health",status="200"}' in metrics.text
    assert "process_resident_memory_bytes" in metrics.text
    assert httpx.get(f"{url}/docs").status_code == 200
    assert "/v1/link" in httpx.get(f"{url}/openapi.json").json()["paths"]


def test_trial_records_are_normalized(url: str) -> None:
    study = json.loads(STUDY.read_text())
    # a supplementary record: the embedded default links drugs as `medlink trials normalize` does, through the
    # descriptors and the supplementary records, which the service's own linker (descriptors) does not hold
    study["protocolSection"]["armsInterventionsModule"]["interventions"].append(
        {"type": "BIOLOGICAL", "name": "sevirumab"}
    )
    response = httpx.post(f"{url}/v1/trials/normalize", json={"records": [study]}, timeout=180)
    assert response.status_code == 200
    [record] = response.json()["records"]
    assert record["nct_id"] == "NCT90000003" and record["conditions"]
    assert record["interventions"][-1]["concepts"][0].startswith("MESH:C")
    bad = httpx.post(f"{url}/v1/trials/normalize", json={"records": [study, {"nope": 1}]})
    assert bad.status_code == 422 and bad.json()["problems"] == ["records.1.protocolSection: Field required"]
    wrong = json.loads(STUDY.read_text())
    wrong["protocolSection"]["identificationModule"]["officialTitle"] = 5  # the schema says text
    typed = httpx.post(f"{url}/v1/trials/normalize", json={"records": [wrong]})
    assert typed.status_code == 422 and "officialTitle" in typed.json()["problems"][0]


@pytest.fixture(scope="module")
def matcher_url(linker: Linker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    matcher = two_trial_matcher(linker, tmp_path_factory.mktemp("served") / "ti")
    yield from serving(create_app(linker, ServiceSettings(), matcher))


def test_patients_are_matched_to_trials(matcher_url: str, url: str) -> None:
    note = {"note": "A 61-year-old man with type 2 diabetes.", "top": 2}
    response = httpx.post(f"{matcher_url}/v1/trials/match", json=note, timeout=60)
    assert response.status_code == 200
    body = response.json()
    assert body["age"] == 61 and [t["nct_id"] for t in body["trials"]] == ["NCT1", "NCT2"]
    assert body["trials"][1]["age_ok"] is False
    criteria = {c["criterion"]: c for c in body["trials"][0]["criteria"]}
    met = criteria["Type 2 diabetes"]
    assert met["verdict"] == "met" and "type 2 diabetes" in met["evidence"]
    assert criteria["Pregnancy"] == {
        "side": "exclusion",
        "criterion": "Pregnancy",
        "verdict": "unknown",
        "evidence": "",
    }
    empty = httpx.post(f"{matcher_url}/v1/trials/match", json={"note": " "})
    assert empty.status_code == 422 and "the patient note is empty" in empty.json()["error"]
    assert httpx.post(f"{matcher_url}/v1/trials/match", json={"note": "x", "top": 0}).status_code == 422
    none = httpx.post(f"{url}/v1/trials/match", json=note)
    assert none.status_code == 404 and "--trials-index" in none.json()["error"]


@pytest.mark.parametrize(
    ("kwargs", "status", "says"),
    [
        ({"content": b"{not json", "headers": {"content-type": "application/json"}}, 422, "not valid JSON"),
        ({"json": {"mentions": []}}, 422, "at least 1 item"),
        ({"json": {"mentions": [5]}}, 422, "mentions.0"),
        ({"json": {"mentions": "heart attack"}}, 422, "valid list"),
        ({"json": {"texts": ["heart attack"]}}, 422, "mentions: Field required"),
        ({"json": {"mentions": ["x"] * 51}}, 413, "the limit is 50"),
        (
            {"content": b'{"mentions": ["' + b"x" * 70_000 + b'"]}', "headers": {"content-type": "application/json"}},
            413,
            "--max-body-bytes",
        ),
        ({"content": iter([b'{"mentions": ["', b"x" * 70_000, b'"]}'])}, 413, "larger than the limit"),
        ({"json": {"mentions": ["+".join(f"a{i}" for i in range(2000))]}}, 422, "the limit is 1,000"),
        (
            {"json": {"mentions": [{"text": "MI", "document": "x" * 5_000}]}},
            422,
            "mentions[0].document: 5,000 characters; the limit is 1,000",
        ),
        (
            {"content": b'{"mentions": ["\\ud800"]}', "headers": {"content-type": "application/json"}},
            422,
            "lone surrogate",
        ),
        (
            {
                "content": b'{"mentions": ["ok"], "document": "\\udfff"}',
                "headers": {"content-type": "application/json"},
            },
            422,
            "lone surrogate",
        ),
    ],
)
def test_bad_requests_get_4xx_that_say_what_to_change(url: str, kwargs: dict, status: int, says: str) -> None:
    response = httpx.post(f"{url}/v1/link", **kwargs)
    assert response.status_code == status
    payload = response.json()
    assert says in payload["error"] + " ".join(payload.get("problems", []))


def test_api_key(keyed_url: str) -> None:
    body = {"mentions": ["heart attack"]}
    assert httpx.get(f"{keyed_url}/health").status_code == 200  # probes need no key
    for headers in ({}, {"X-API-Key": "wrong"}, {"Authorization": "Bearer wrong"}):
        denied = httpx.post(f"{keyed_url}/v1/link", json=body, headers=headers)
        assert denied.status_code == 401 and denied.json() == {"error": "unauthorized"}
    for headers in ({"X-API-Key": "s3cret"}, {"Authorization": "Bearer s3cret"}):
        assert httpx.post(f"{keyed_url}/v1/link", json=body, headers=headers).status_code == 200


def test_medlink_serve_command_binds_localhost_and_stops_gracefully(linker: Linker) -> None:
    port = free_port()
    env = {**os.environ, "MEDLINK_API_KEY": "k"}
    process = subprocess.Popen(
        [sys.executable, "-m", "medlink", "serve", "--port", str(port), "--exact-only"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                    break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, process.stdout.read()
                time.sleep(0.2)
        linked = httpx.post(
            f"http://127.0.0.1:{port}/v1/link", json={"mentions": ["heart attack"]}, headers={"X-API-Key": "k"}
        ).json()
        assert linked["results"][0]["concepts"] == ["MESH:D009203"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has stopped
        log = process.stdout.read()
        assert "http://127.0.0.1:" in log and "Application shutdown complete" in log and "Traceback" not in log
    finally:
        if process.poll() is None:
            process.kill()
