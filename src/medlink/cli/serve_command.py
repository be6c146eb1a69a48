"""``medlink serve``: the REST service (FastAPI + uvicorn) around one linker."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from medlink.cli.dataclass_options import dataclass_options
from medlink.cli.linker_options import LinkerChoice, annotator_config, linker_options, make_linker
from medlink.cli.paths import PathOption
from medlink.serve.settings import ServiceSettings


@click.command()
@linker_options(skip=("max_document_chars",))  # the service's own limit refuses longer documents
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; the default serves this machine only (use 0.0.0.0 behind a proxy, with "
    "MEDLINK_API_KEY set).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@dataclass_options(ServiceSettings)
@click.option(
    "--batch-wait-ms",
    type=click.FloatRange(min=0),
    default=ServiceSettings.batch_wait_seconds * 1000,
    show_default=True,
    help="How long to gather concurrent requests into one encoder batch.",
)
@click.option(
    "--trials-index",
    type=PathOption(path_type=Path, file_okay=False),
    default=None,
    help="A trial index (`medlink trials index`) to serve POST /v1/trials/match from.",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
)
def serve(
    linker_choice: LinkerChoice,
    host: str,
    port: int,
    batch_wait_ms: float,
    trials_index: Path | None,
    log_level: str,
    **limits: Any,
) -> None:
    """Serve a linker over HTTP: POST /v1/link, GET /v1/concepts/{id}, POST /v1/trials/normalize, POST
    /v1/trials/match (with --trials-index), GET /health, GET /metrics; OpenAPI pages at /docs.

    \b
    Examples:
      medlink serve                                   # the embedded default on 127.0.0.1:8000
      MEDLINK_API_KEY=secret medlink serve --host 0.0.0.0 --index my-index/
      curl -s localhost:8000/v1/link -H 'content-type: application/json' -d '{"mentions": ["heart attack"]}'

    When MEDLINK_API_KEY is set, every request but /health must send it (Authorization: Bearer KEY or
    X-API-Key: KEY). Requests are worked in --workers processes; work past --request-seconds is stopped (its
    worker killed and replaced) and answered 503. SIGTERM or Ctrl-C stops taking requests, answers those in
    flight within their budget, then exits.
    """
    try:
        import uvicorn

        from medlink.serve.app import create_app
        from medlink.trials.normalization.normalizer_spec import drug_spec_for
    except ImportError as error:
        raise click.ClickException(
            f"the service needs its extras ({error.name} is missing): pip install 'medlink[serve]'"
        ) from None
    try:
        settings = ServiceSettings.from_environment(batch_wait_seconds=batch_wait_ms / 1000, **limits)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    annotation = annotator_config(linker_choice, {})  # the --config file's [annotator] table, before any work
    linker = make_linker(linker_choice, progress=True)  # loaded (and the default index built) before serving
    if (drugs := drug_spec_for(linker)) is not None:  # /v1/trials/normalize links drugs with the drug default
        drugs.warm(progress=True)
    matcher = None
    if trials_index is not None:
        from medlink.trials.matching.matcher_spec import MatcherSpec

        matcher = MatcherSpec(trials_index).build()
    uvicorn.run(
        create_app(linker, settings, matcher, annotation),
        host=host,
        port=port,
        log_level=log_level,
        # in-flight requests end within their budget (their workers are killed at it): so does a restart
        timeout_graceful_shutdown=math.ceil(settings.request_seconds) + 1,
    )
