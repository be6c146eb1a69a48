"""The web service: one linker behind ``POST /v1/link`` and friends.

Routes: ``POST /v1/link`` (a batch of mentions, optionally with a document for abbreviations), ``GET
/v1/concepts/{id}``, ``POST /v1/trials/normalize`` (ClinicalTrials.gov API v2 studies), ``POST /v1/trials/match``
(a patient note against a trial index, when the service has one), ``POST /v1/annotate``, ``GET /health``, ``GET
/metrics`` (Prometheus text), the OpenAPI pages at ``/docs`` and the web pages. Bad input gets a 4xx that says
what to change, never a 500. This module puts the parts together: the JSON routes are ``routes.py``, the pages
``web/pages.py``, the work ``work.py`` run by ``workers.py``.
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response

from medlink.linking import Linker
from medlink.linking.annotation.annotator import AnnotatorConfig, packaged_span_sources
from medlink.serve.answers import TextJSONResponse, add_error_handlers
from medlink.serve.batching import LinkBatcher
from medlink.serve.core import ServiceCore
from medlink.serve.guards import Guard
from medlink.serve.metrics import CONTENT_TYPE, ServiceMetrics
from medlink.serve.routes import add_api_routes
from medlink.serve.schemas import request_models
from medlink.serve.settings import ServiceSettings
from medlink.serve.web.pages import add_pages
from medlink.serve.work import ServiceWork
from medlink.serve.workers import InProcess, Runner, WorkerPool
from medlink.trials.matching.matcher import TrialMatcher
from medlink.version import __version__

log = logging.getLogger("medlink.serve")


def create_app(
    linker: Linker,
    settings: ServiceSettings | None = None,
    matcher: TrialMatcher | None = None,
    annotation: AnnotatorConfig | None = None,
) -> FastAPI:
    """The service around ``linker`` (load it first: the app does not build indexes on a request), and around
    ``matcher`` for ``/v1/trials/match`` when one is given; ``annotation``: the settings of ``/v1/annotate``
    (default: ``AnnotatorConfig()``; a request says whether to assess context). The work runs in
    ``settings.worker_count`` worker processes, each holding a copy of both, started with the app."""
    settings = settings or ServiceSettings()
    metrics = ServiceMetrics()
    work = ServiceWork(linker, matcher, packaged_span_sources(annotation or AnnotatorConfig()))
    runner = _runner(work, settings, metrics)
    batcher = LinkBatcher(
        runner,
        settings.batch_chars,
        settings.batch_wait_seconds,
        settings.request_seconds,
        settings.max_queued_mentions,
        metrics.observe_batch,
    )
    core = ServiceCore(linker, settings, batcher, runner, matcher)
    models = request_models(
        settings.max_batch, linker.config.max_mention_chars, settings.max_document_chars, settings.max_note_chars
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await runner.start()
        batcher.start()
        try:
            yield
            await batcher.stop()  # uvicorn has stopped taking requests; answer the ones already queued
        finally:
            await runner.stop()
        log.info("medlink service stopped")

    app = FastAPI(
        title="medlink",
        version=__version__,
        lifespan=lifespan,
        default_response_class=TextJSONResponse,
        description="Link free-text medical terms to terminology concepts.",
    )
    add_error_handlers(app)

    @app.get("/health", responses={503: {"description": "No worker process is alive (they are being restarted)"}})
    async def health() -> JSONResponse:
        """Open without a key (load balancers probe it), so it says what serves, never where it lives on disk;
        503 while no worker process is alive, so that a balancer sends requests elsewhere."""
        kind = linker.spec.kind if linker.spec is not None else "assembled in memory"
        ready = runner.ready()
        return TextJSONResponse(health_of(ready, kind), status_code=200 if ready else 503)

    def health_of(ready: bool, kind: str) -> dict[str, Any]:
        return {
            "status": "ok" if ready else "degraded",
            "version": __version__,
            "concepts": len(linker.terminology),
            "linker": kind,
            "queued_mentions": batcher.queued,
            **runner.describe(),
        }

    @app.get("/metrics", response_class=Response)
    async def prometheus() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    add_api_routes(app, core, models)
    add_pages(app, core)
    app.add_middleware(Guard, settings=settings, metrics=metrics)
    return app


def _runner(work: ServiceWork, settings: ServiceSettings, metrics: ServiceMetrics) -> Runner:
    """Worker processes, sharing the cores; threads when asked (``workers=0``) or when the linker cannot be
    copied to another process (one assembled from parts in Python)."""
    count = settings.worker_count
    if count == 0:
        return InProcess(work)
    try:
        threads = max(1, (os.cpu_count() or 1) // count)
        return WorkerPool(work, count, settings.worker_restarts_per_minute, metrics, threads)
    except (TypeError, AttributeError, pickle.PicklingError) as error:
        log.warning("requests run in threads, where they cannot be stopped: %s", error)
        return InProcess(work)
