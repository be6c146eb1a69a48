"""How the service answers when it does not answer with results: errors as ``{"error", "problems"}`` JSON, a 503
with ``Retry-After``, validation errors said field by field, and the handlers that turn every exception into
one of these (never a traceback, never a path)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from medlink.errors import MedlinkError
from medlink.serve.schemas import ErrorOut
from medlink.serve.text_checks import NOT_TEXT

log = logging.getLogger("medlink.serve")


class TextJSONResponse(JSONResponse):
    """JSON in UTF-8; a lone surrogate (which JSON allows and UTF-8 cannot carry) is written as its escape
    instead of failing the response with a 500."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


# 400: a body that is not JSON in UTF-8, or a host name the service does not answer to; 403: a browser's request
# from another site (no key set); 401: no or a wrong key (key set).
ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorOut} for code in (400, 401, 403, 404, 413, 422, 503)}


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


def busy(reason: str) -> JSONResponse:
    """503 with a reason and a hint when to retry."""
    response = refuse(503, reason)
    response.headers["Retry-After"] = "1"
    return response


def check_batch(size: int, limit: int, what: str) -> None:
    if size > limit:
        raise HTTPException(
            413,
            f"{size:,} {what} in one request; the limit is {limit:,}: split the batch, or "
            f"start the server with a larger --max-batch",
        )


def refuse(status: int, message: str, problems: list[str] | None = None) -> JSONResponse:
    return TextJSONResponse({"error": message, "problems": problems or []}, status_code=status)


def add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        return refuse(422, "invalid request", validation_problems(error.errors()))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        detail = str(error.detail)
        if error.status_code == 400 and detail == "There was an error parsing the body":  # FastAPI's words
            detail = "the body could not be read as JSON in UTF-8"
        response = refuse(error.status_code, detail)
        response.headers.update(error.headers or {})  # a 405's Allow
        return response

    @app.exception_handler(MedlinkError)
    async def medlink_error(request: Request, error: MedlinkError) -> JSONResponse:
        # Bad requests are answered before linking; a MedlinkError here is the server's (an index, a model): the
        # detail, which may name paths, goes to the log only.
        log.error("%s %s failed: %s", request.method, request.url.path, error)
        return refuse(500, "the service could not answer this request; its log says why")

    @app.exception_handler(Exception)
    async def server_fault(request: Request, error: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        return refuse(500, "the service could not answer this request; its log says why")
