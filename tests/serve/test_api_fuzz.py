"""Schemathesis against the service's own OpenAPI schema, on a real uvicorn server on 127.0.0.1: every operation,
with inputs generated from the schema, must answer without a server error and as its schema says (status codes,
content types, response bodies)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="the API fuzz needs the [test] extras (schemathesis)")
pytest.importorskip("uvicorn", reason="the service tests need the [serve] extras")

from hypothesis import HealthCheck, given, settings  # noqa: E402

from medlink import Linker  # noqa: E402
from medlink.serve.app import create_app  # noqa: E402
from medlink.serve.settings import ServiceSettings  # noqa: E402
from support import serving  # noqa: E402

pytestmark = pytest.mark.slow  # the trial route compiles the embedded drug terminology on first use (~30 s)

EXAMPLES = 40  # per operation; each is one real HTTP request


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    linker = Linker.load(exact_only=True)  # the embedded MeSH; the service around it is what is under test
    yield from serving(create_app(linker, ServiceSettings(max_batch=20, max_body_bytes=200_000)))


def test_every_operation_answers_as_its_schema_says(service: str) -> None:
    schema = schemathesis.openapi.from_url(f"{service}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {operation.label for operation in operations} >= {
        "POST /v1/link",
        "GET /v1/concepts/{concept_id}",
        "POST /v1/trials/normalize",
        "GET /health",
    }
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def answers_as_documented(case) -> None:
            case.call_and_validate(timeout=60)

        answers_as_documented()
