"""No text from outside takes more than linear time: every entry point that reads such text is timed on adversarial
families at n and 8n characters, and fails when the time grows more than 16× (quadratic work grows 64×).

The entry points come from where they are declared, not from a list here, so a new one joins by construction:
- every string field of every request body of the service, from its own OpenAPI schema (each field at its
  documented ``maxLength``, and every array at its ``maxItems``), through the real app in-process;
- every header the service's guard reads (``guards.READ_HEADERS``);
- every terminology format (``terminology.readers.READERS``) and corpus format (``CORPUS_FORMATS``), one line of
  the family in a file.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the complexity test drives the service (the [serve] extras)")
from starlette.testclient import TestClient

from medlink import Linker
from medlink.benchmark.hostile_text import FAMILIES
from medlink.errors import MedlinkError
from medlink.evaluation.corpus_formats import CORPUS_FORMATS, load_corpus
from medlink.serve.app import create_app
from medlink.serve.guards import READ_HEADERS
from medlink.serve.settings import ServiceSettings
from medlink.terminology import SourceSpec, compile_terminology
from medlink.terminology.readers import READERS
from support import two_trial_matcher

pytestmark = pytest.mark.slow  # about two minutes: hundreds of requests at the limits, each timed twice

GROWTH = 16  # allowed growth for 8× the input: linear is 8×, n log n a little more, quadratic 64×
FLOOR = 0.02  # seconds: below this at n, timings are noise (the bound becomes 16 × FLOOR at 8n)


def _seconds(call: Callable[[], Any]) -> float:
    """The faster of two runs (the first may pay for caches and lazy loading)."""
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def _assert_linear(what: str, at: Callable[[int], Any], n: int) -> None:
    small, large = _seconds(lambda: at(n)), _seconds(lambda: at(8 * n))
    assert large <= GROWTH * max(small, FLOOR), f"{what}: {small:.3f} s at {n:,}, {large:.3f} s at {8 * n:,}"


# --- the service: every string field of every request body, from its OpenAPI schema -----------------------------


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    linker = Linker.load()
    matcher = two_trial_matcher(linker, tmp_path_factory.mktemp("trials"))
    # Threads, no time budget to speak of: what is timed is the work, not the worker that would be killed.
    settings = ServiceSettings(workers=0, request_seconds=600, max_body_bytes=64 * 1024 * 1024)
    with TestClient(create_app(linker, settings, matcher), base_url="http://localhost") as client:
        yield client


def _resolve(schema: dict, root: dict) -> dict:
    while "$ref" in schema:
        schema = root["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _branches(schema: dict, root: dict) -> list[dict]:
    """The shapes a value of ``schema`` may take (``null`` left out); limits written beside an ``anyOf`` (as
    pydantic writes them for an optional field) apply to each."""
    schema = _resolve(schema, root)
    shared = {key: schema[key] for key in ("maxLength", "maxItems") if key in schema}
    found = [{**shared, **_resolve(branch, root)} for branch in schema.get("anyOf", [schema])]
    return [branch for branch in found if branch.get("type") != "null"]


def _minimal(schema: dict, root: dict) -> Any:
    """The smallest valid value of ``schema``."""
    schema = _branches(schema, root)[0]
    kind = schema.get("type")
    if "enum" in schema or "const" in schema:
        return schema.get("enum", [schema.get("const")])[0]
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: _minimal(properties[name], root) for name in schema.get("required", [])}
    if kind == "array":
        return [_minimal(schema["items"], root) for _ in range(schema.get("minItems", 0))]
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    return "NCT00000001" if schema.get("minLength") else "a"


def _text_fields(schema: dict, root: dict, path: tuple = ()) -> Iterator[tuple[tuple, dict]]:
    """(path, string schema) of every string a body may hold; a path step is a property name or ``[]``."""
    for branch in _branches(schema, root):
        kind = branch.get("type")
        if kind == "string" and "enum" not in branch:
            yield path, branch
        elif kind == "object":
            for name, value in branch.get("properties", {}).items():
                yield from _text_fields(value, root, (*path, name))
        elif kind == "array":
            yield from _text_fields(branch["items"], root, (*path, "[]"))


def _body_with(schema: dict, root: dict, path: tuple, leaf: Any) -> Any:
    """The minimal body with ``leaf`` at ``path`` (an array along it holds that one item)."""
    if not path:
        return leaf
    branch = next(b for b in _branches(schema, root) if b.get("type") in ("object", "array"))
    if path[0] == "[]":
        return [_body_with(branch["items"], root, path[1:], leaf)]
    body = _minimal(branch, root)
    body[path[0]] = _body_with(branch["properties"][path[0]], root, path[1:], leaf)
    return body


def _operations(client: TestClient) -> Iterator[tuple[str, dict, dict]]:
    root = client.get("/openapi.json").json()
    for route, methods in root["paths"].items():
        for method, operation in methods.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if method == "post" and body is not None:
                yield route, body, root


def _service_cases(client: TestClient) -> list[tuple[str, Callable[[int], Any], int]]:
    cases = []
    for route, body, root in _operations(client):
        for path, field in _text_fields(body, root):
            limit = field.get("maxLength")
            where = f"POST {route} {'.'.join(path)}"
            assert limit, f"{where} has no maxLength: a text field from outside needs a limit"
            for family_name, family in FAMILIES.items():
                post = partial(_post_field, client, route, partial(_body_with, body, root, path))
                cases.append((f"{where} [{family_name}]", partial(_sized, post, family), max(1, limit // 8)))
        cases.append((f"POST {route} [deep nesting]", _nested_poster(client, route), 2_000))
    return cases


def _post_field(client: TestClient, route: str, body_with: Callable[[str], Any], text: str) -> None:
    answer = client.post(route, json=body_with(text))
    assert answer.status_code < 500, f"{route}: {answer.status_code} {answer.text[:300]}"


def _sized(send: Callable[[str], Any], family: Callable[[int], str], size: int) -> None:
    send(family(size))


def _nested_poster(client: TestClient, route: str) -> Callable[[int], None]:
    def post(depth: int) -> None:
        answer = client.post(route, content="[" * depth + "]" * depth, headers={"content-type": "application/json"})
        assert answer.status_code < 500, f"{route}: {answer.status_code}"

    return post


def test_every_text_field_of_every_request_is_linear(client: TestClient) -> None:
    cases = _service_cases(client)
    assert len(cases) > 50  # the schema was walked: link, annotate, trial and match fields
    for what, post, n in cases:
        _assert_linear(what, post, n)


def test_every_header_the_guard_reads_is_linear(client: TestClient) -> None:
    keyed = create_app(Linker.load(exact_only=True), ServiceSettings(workers=0, api_key="k"))  # reads the cookie
    with TestClient(keyed, base_url="http://localhost") as keyed_client:
        for header in READ_HEADERS:
            for family_name, family in FAMILIES.items():
                for app_client in (client, keyed_client):

                    def get(size: int, name: str = header.decode(), family=family, app_client=app_client) -> None:
                        value = family(size).encode("utf-8")  # headers travel as bytes
                        answer = app_client.get("/", headers={name: value})
                        assert answer.status_code < 500, f"{name}: {answer.status_code}"

                    _assert_linear(f"header {header.decode()} [{family_name}]", get, 4_000)


# --- files: every terminology and corpus format -------------------------------------------------------------


def _file_reader(tmp_path: Path, read: Callable[[Path], Any], line: Callable[[str], str]) -> Callable[[str], Any]:
    def run(text: str) -> None:
        path = tmp_path / "input.txt"
        path.write_text(line(text), encoding="utf-8")
        with contextlib.suppress(MedlinkError, ValueError):  # refusing the file is an answer too: its time counts
            read(path)

    return run


@pytest.mark.parametrize("format_name", sorted(READERS))
def test_every_terminology_format_reads_a_line_in_linear_time(format_name: str, tmp_path: Path) -> None:
    def read(path: Path) -> None:
        compile_terminology([SourceSpec(path, format_name)])

    def lines(text: str) -> str:  # the shapes of the formats' lines, each holding the family
        quoted = text.replace('"', "")
        return (
            f"D000001\t{text}\t{text}|{text}\nD000001||{text}|{text}\n"
            f'DB00001,,"{quoted}",,,"{quoted} | {quoted}",\n'
            f'[Term]\nid: X:1\nname: {text}\nsynonym: "{quoted}" EXACT []\n'
        )

    run = _file_reader(tmp_path, read, lines)
    for family_name, family in FAMILIES.items():
        _assert_linear(f"{format_name} [{family_name}]", lambda size, family=family: run(family(size)), 20_000)


@pytest.mark.parametrize("format_name", sorted(CORPUS_FORMATS))
def test_every_corpus_format_reads_a_line_in_linear_time(format_name: str, tmp_path: Path) -> None:
    def read(path: Path) -> None:
        load_corpus(f"{format_name}:{path}")

    def line(text: str) -> str:
        record = json.dumps({"text": text, "label": "D000001"})
        return f"1|t|{text}\n1\t0\t{len(text)}\t{text}\tDisease\tD000001\n{text}\tD000001\n{record}\n\n"

    run = _file_reader(tmp_path, read, line)
    for family_name, family in FAMILIES.items():
        _assert_linear(f"{format_name} [{family_name}]", lambda size, family=family: run(family(size)), 20_000)
