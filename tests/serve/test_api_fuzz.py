"""Schemathesis against the service's own OpenAPI schema, on a real uvicorn server on 127.0.0.1, run as an operator
would run it: its command line, every check (``-c all``), valid and invalid inputs (``--mode all``), every phase,
every operation. It must find nothing: no server error, no undocumented status, no invalid request accepted, an
``Allow`` header on every 405."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx", reason="the service tests need the [test] extras (httpx)")
pytest.importorskip("schemathesis", reason="the API fuzz needs the [test] extras (schemathesis)")
pytest.importorskip("uvicorn", reason="the service tests need the [serve] extras")

from medlink import Linker  # noqa: E402
from medlink.serve.app import create_app  # noqa: E402
from medlink.serve.settings import ServiceSettings  # noqa: E402
from support import serving  # noqa: E402

pytestmark = pytest.mark.slow  # the trial route compiles the embedded drug terminology on first use (~30 s)

EXAMPLES = int(os.environ.get("MEDLINK_API_FUZZ_EXAMPLES", "40"))  # per operation and phase
CONFIG = Path(__file__).with_name("schemathesis.toml")


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    linker = Linker.load(exact_only=True)  # the embedded MeSH; the service around it is what is under test
    yield from serving(create_app(linker, ServiceSettings(max_batch=20, max_body_bytes=200_000, workers=1)))


def test_schemathesis_with_every_check_and_invalid_inputs_finds_nothing(service: str, tmp_path: Path) -> None:
    command = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"
    ran = subprocess.run(
        [
            *(command, "--no-color", "--config-file", str(CONFIG), "run", f"{service}/openapi.json"),
            *("--checks", "all", "--mode", "all", "--max-examples", str(EXAMPLES), "--generation-deterministic"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    summary = ran.stdout[-6_000:]
    assert ran.returncode == 0, summary
    operations = sum(len(methods) for methods in httpx.get(f"{service}/openapi.json").json()["paths"].values())
    assert operations >= 7 and f"Tested: {operations}" in summary, summary  # every operation was reached
    assert " passed" in summary and "failure" not in summary.lower(), summary
