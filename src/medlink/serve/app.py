"""The web service: one linker behind ``POST /v1/link`` and friends.

Routes: ``POST /v1/link`` (a batch of mentions, optionally with a document for abbreviations), ``GET
/v1/concepts/{id}``, ``POST /v1/trials/normalize`` (ClinicalTrials.gov API v2 studies), ``POST /v1/trials/match``
(a patient note against a trial index, when the service has one), ``GET /health``, ``GET /metrics`` (Prometheus
text) and the OpenAPI pages at ``/docs``. Bad input gets a 4xx that says what to change,
never a 500.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from medlink.errors import MedlinkError
from medlink.linking import Linker, Mention
from medlink.linking.annotation.tagger import choose_tagger
from medlink.serve.batching import Busy, LinkBatcher
from medlink.serve.core import NO_TRIAL_INDEX, ServiceCore
from medlink.serve.guards import Guard
from medlink.serve.metrics import CONTENT_TYPE, ServiceMetrics
from medlink.serve.schemas import (
    ConceptOut,
    ErrorOut,
    LinkResponse,
    request_models,
)
from medlink.serve.settings import ServiceSettings
from medlink.serve.text_checks import NOT_TEXT, text_problems
from medlink.serve.web.pages import add_pages
from medlink.trials.matching.matcher import TrialMatcher
from medlink.version import __version__

log = logging.getLogger("medlink.serve")


class TextJSONResponse(JSONResponse):
    """JSON in UTF-8; a lone surrogate (which JSON allows and UTF-8 cannot carry) is written as its escape
    instead of failing the response with a 500."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


_ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorOut} for code in (401, 404, 413, 422, 503)}


def create_app(linker: Linker, settings: ServiceSettings | None = None, matcher: TrialMatcher | None = None) -> FastAPI:
    """The service around ``linker`` (load it first: the app does not build indexes on a request), and around
    ``matcher`` for ``/v1/trials/match`` when one is given."""
    settings = settings or ServiceSettings()
    metrics = ServiceMetrics()
    batcher = LinkBatcher(
        linker,
        settings.batch_chars,
        settings.batch_wait_seconds,
        settings.request_seconds,
        settings.max_queued_mentions,
        metrics.observe_batch,
    )
    core = ServiceCore(linker, settings, batcher, matcher, choose_tagger("auto"))
    models = request_models(
        settings.max_batch, linker.config.max_mention_chars, settings.max_document_chars, settings.max_note_chars
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        batcher.start()
        yield
        await batcher.stop()  # uvicorn has stopped taking requests; answer the ones already queued
        log.info("medlink service stopped")

    app = FastAPI(
        title="medlink",
        version=__version__,
        lifespan=lifespan,
        default_response_class=TextJSONResponse,
        description="Link free-text medical terms to terminology concepts.",
    )
    _add_error_handlers(app)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Open without a key (load balancers probe it), so it says what serves, never where it lives on disk."""
        recipe = linker.recipe
        kind = "embedded default" if recipe is None or recipe.index_dir is None else "index"
        if recipe is not None and recipe.ranker_dir is not None:
            kind = "set ranker"
        return {
            "status": "ok",
            "version": __version__,
            "concepts": len(linker.terminology),
            "linker": kind,
            "queued_mentions": batcher.queued,
        }

    @app.get("/metrics", response_class=Response)
    async def prometheus() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    @app.post("/v1/link", responses={200: {"model": LinkResponse}, **_ERRORS})
    @_body(models.link)
    async def link(body: Any) -> JSONResponse:
        """Link a batch of mentions; concurrent requests share encoder batches, one mention of each in turn."""
        _check_batch(len(body.mentions), settings.max_batch, "mentions")
        mentions = [_mention(item, body.document) for item in body.mentions]
        problems = text_problems(mentions, linker.config.max_mention_chars, settings.max_document_chars)
        if problems:
            return _error(422, "a mention or document is over its limit or not text", problems)
        try:
            results = await core.link(mentions)
        except Busy as error:
            return _busy(str(error))
        return TextJSONResponse({"results": [result.to_dict() for result in results]})

    @app.get("/v1/concepts/{concept_id}", response_model=ConceptOut, responses=_ERRORS)
    async def concept(concept_id: str) -> dict[str, Any]:
        """A concept of the linker's terminology (alternative ids resolve to their concept)."""
        found = linker.terminology.get(concept_id)
        if found is None:
            raise HTTPException(404, f"unknown concept id {concept_id!r} in this terminology")
        return {
            "id": found.id,
            "preferred_name": found.preferred_name,
            "names": [{"text": name.text, "kind": str(name.kind)} for name in found.names],
            "semantic_types": list(found.semantic_types),
            "parents": list(found.parents),
            "tree_numbers": list(found.tree_numbers),
            "alt_ids": list(found.alt_ids),
            "xrefs": list(found.xrefs),
            "definition": found.definition,
            "source": found.source,
        }

    @app.post("/v1/trials/normalize", responses=_ERRORS)
    @_body(models.trials)
    async def normalize_trials(body: Any) -> JSONResponse:
        """Conditions and interventions of ClinicalTrials.gov API v2 studies, linked (as ``medlink trials
        normalize`` writes them)."""
        from medlink.trials.readers import parse_api_study

        _check_batch(len(body.records), settings.max_batch, "records")
        records, problems = [], []
        for position, study in enumerate(body.records):
            try:
                records.append(parse_api_study(study.model_dump()))
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                problems.append(f"records[{position}]: {error}")
        if problems:
            return _error(422, "a record is not a ClinicalTrials.gov API v2 study", problems)
        try:
            normalized = await core.normalize(records)
        except Busy as error:
            return _busy(str(error))
        return TextJSONResponse({"records": [trial.to_dict() for trial in normalized]})

    @app.post("/v1/trials/match", responses=_ERRORS)
    @_body(models.match)
    async def match_trials(body: Any) -> JSONResponse:
        """The trials of the service's trial index ranked for a patient note, each with why (as ``medlink trials
        match --format json`` prints them)."""
        if matcher is None:
            raise HTTPException(404, NO_TRIAL_INDEX)
        from medlink.trials.matching.notes import read_note

        problems = text_problems([body.note], settings.max_note_chars, None, "note")
        if problems:
            return _error(422, "the note is over its limit or not text", problems)
        try:
            read_note(body.note)  # what is wrong with the note itself is the client's to fix: 422, not a fault
        except MedlinkError as error:
            return _error(422, str(error))
        try:
            result = await core.match(body.note, body.top)
        except Busy as error:
            return _busy(str(error))
        return TextJSONResponse(result.to_dict())

    @app.post("/v1/annotate", responses=_ERRORS)
    @_body(models.annotate)
    async def annotate(body: Any) -> JSONResponse:
        """Every concept mention of each document, linked, with offsets and whether it is negated or uncertain
        (as ``medlink annotate`` writes them)."""
        from dataclasses import replace

        from medlink.linking.annotation.annotator import AnnotatorConfig, with_tagger
        from medlink.linking.mentions.branches import branches_for, has_tree_numbers

        _check_batch(len(body.documents), settings.max_batch, "documents")
        texts = [document.text for document in body.documents]
        problems = text_problems(texts, settings.max_document_chars, None, "documents")
        if problems:
            return _error(422, "a document is over its limit or not text", problems)
        config = with_tagger(AnnotatorConfig(context=body.context), core.tagger, body.entity_type)
        if body.entity_type:
            if not has_tree_numbers(linker.terminology):
                return _error(422, "this service's terminology has no tree numbers to restrict by entity_type")
            try:
                config = replace(config, branches=branches_for(body.entity_type))
            except MedlinkError as error:
                return _error(422, str(error))
        try:
            found = await core.annotate(texts, config)
        except Busy as error:
            return _busy(str(error))
        return TextJSONResponse(
            {
                "documents": [
                    {"id": document.id, "annotations": [a.to_dict() for a in annotated]}
                    for document, annotated in zip(body.documents, found, strict=True)
                ]
            }
        )

    add_pages(app, core)
    app.add_middleware(Guard, settings=settings, metrics=metrics)
    return app


def _body(model: type) -> Callable[[Callable], Callable]:
    """Give a route's ``body`` parameter its request model: a class made for this service's limits, which FastAPI
    reads from the annotation (set here, since a string annotation would not resolve to a local class)."""

    def annotate(route: Callable) -> Callable:
        route.__annotations__["body"] = model
        return route

    return annotate


def _mention(item: Any, shared_document: str | None) -> str | Mention:
    if not isinstance(item, str):  # a MentionIn
        return Mention(item.text, item.document if item.document is not None else shared_document)
    return Mention(item, shared_document) if shared_document else item  # plain text: cached by its text


_UNION_BRANCHES = {"str", "constrained-str", "MentionIn"}  # how pydantic names the two shapes of a mention
_WRONG_SHAPE = {"model_type", "dict_type", "string_type"}  # "not this branch of the union"


def validation_problems(errors: Sequence[Any]) -> list[str]:
    """Pydantic's errors as ``field: problem`` lines: a lone surrogate said in words, and for a value that fits
    neither shape of a union (a mention is text or an object), the branch it did not try to be left out."""
    problems: dict[str, list[tuple[str, str]]] = {}
    for item in errors:
        if item.get("type") == "json_invalid":
            problems.setdefault("body", []).append(
                ("", f"the body is not valid JSON: {item.get('ctx', {}).get('error', item['msg'])}")
            )
            continue
        parts = [str(part) for part in item["loc"] if part != "body"]
        where = ".".join(part for part in parts if part not in _UNION_BRANCHES) or "body"
        message = item["msg"]
        if item.get("type") == "string_unicode":
            message = NOT_TEXT
        problems.setdefault(where, []).append((item.get("type", ""), message))
    lines = []
    for where, found in problems.items():
        kept = [message for kind, message in found if kind not in _WRONG_SHAPE] or [message for _, message in found]
        lines += [
            message if where == "body" and message.startswith("the body") else f"{where}: {message}"
            for message in dict.fromkeys(kept)
        ]
    return lines


def _busy(reason: str) -> JSONResponse:
    """503 with a reason and a hint when to retry."""
    response = _error(503, reason)
    response.headers["Retry-After"] = "1"
    return response


def _check_batch(size: int, limit: int, what: str) -> None:
    if size > limit:
        raise HTTPException(
            413,
            f"{size:,} {what} in one request; the limit is {limit:,}: split the batch, or "
            f"start the server with a larger --max-batch",
        )


def _error(status: int, message: str, problems: list[str] | None = None) -> JSONResponse:
    return TextJSONResponse({"error": message, "problems": problems or []}, status_code=status)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        return _error(422, "invalid request", validation_problems(error.errors()))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        return _error(error.status_code, str(error.detail))

    @app.exception_handler(MedlinkError)
    async def medlink_error(request: Request, error: MedlinkError) -> JSONResponse:
        # Bad requests are answered before linking; a MedlinkError here is the server's (an index, a model): the
        # detail, which may name paths, goes to the log only.
        log.error("%s %s failed: %s", request.method, request.url.path, error)
        return _error(500, "the service could not answer this request; its log says why")

    @app.exception_handler(Exception)
    async def server_fault(request: Request, error: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        return _error(500, "the service could not answer this request; its log says why")
