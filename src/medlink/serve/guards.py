"""What every request passes before a route sees it: the API key, the body-size limit and the metrics clock.

One plain ASGI middleware rather than three: it runs on every request, so it stays small and does no parsing.
"""

from __future__ import annotations

import hmac
import json
import time
from http.cookies import CookieError, SimpleCookie
from typing import Any

from medlink.serve.metrics import ServiceMetrics
from medlink.serve.settings import ServiceSettings
from medlink.serve.web.pages import KEY_COOKIE, OPEN_PAGE_PATHS, is_page, key_redirect

OPEN_PATHS = frozenset({"/health", *OPEN_PAGE_PATHS})  # load balancers probe /health; the page's key form and assets
ROUTES = (
    "/health",
    "/metrics",
    "/docs",
    "/openapi.json",
    "/v1/link",
    "/v1/trials/normalize",
    "/v1/trials/match",
    "/",
    "/trials",
    "/trials/normalize",
    "/key",
)


def route_label(path: str) -> str:
    """A bounded set of labels: unknown paths must not grow the metrics without end."""
    if path in ROUTES:
        return path
    if path.startswith("/v1/concepts/"):
        return "/v1/concepts/{id}"
    return "/concept/{id}" if path.startswith("/concept/") else "other"


class Guard:
    def __init__(self, app: Any, settings: ServiceSettings, metrics: ServiceMetrics) -> None:
        self.app = app
        self.settings = settings
        self.metrics = metrics
        self._key = settings.api_key.encode() if settings.api_key else None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_note(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            if self._key is not None and scope["path"] not in OPEN_PATHS and not self._authorized(scope):
                if is_page(scope["path"]):  # a person at the page: ask for the key, then come back
                    query = scope.get("query_string", b"").decode("latin-1")
                    await _redirect(send_and_note, key_redirect(scope["path"], query))
                else:
                    await _reply(send_and_note, 401, {"error": "unauthorized"})  # no detail for a wrong key
                return
            declared = _content_length(scope)
            limit = self.settings.max_body_bytes
            if declared is not None and declared > limit:
                await _reply(send_and_note, 413, _too_large(declared, limit))
                return
            if declared is None and scope["method"] in ("POST", "PUT", "PATCH"):
                # A chunked body has no declared size: read it here, up to the limit, and hand it on.
                body = await _read_body(receive, limit)
                if body is None:
                    await _reply(send_and_note, 413, _too_large(None, limit))
                    return
                receive = _replay(body, receive)
            await self.app(scope, receive, send_and_note)
        finally:
            self.metrics.observe_request(route_label(scope["path"]), status, time.perf_counter() - started)

    def _authorized(self, scope: dict) -> bool:
        """The key from a header, or for the web page's paths from its session cookie (SameSite=Strict: another
        site cannot make a browser send it; the JSON API takes a header only)."""
        headers = dict(scope["headers"])
        given = headers.get(b"x-api-key")
        bearer = headers.get(b"authorization", b"")
        if given is None and bearer[:7].lower() == b"bearer ":
            given = bearer[7:].strip()
        if given is None and is_page(scope["path"]):
            given = _cookie(headers.get(b"cookie", b""), KEY_COOKIE)
        return given is not None and hmac.compare_digest(given, self._key or b"")


def _cookie(header: bytes, name: str) -> bytes | None:
    cookies = SimpleCookie()
    try:
        cookies.load(header.decode("latin-1"))
    except CookieError:
        return None
    found = cookies.get(name)
    return found.value.encode("latin-1", errors="replace") if found is not None else None


def _content_length(scope: dict) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _read_body(receive: Any, limit: int) -> bytes | None:
    """The whole body, or ``None`` once it passes ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)  # the client went away; the app will see an empty body
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """``receive`` that gives ``body`` first, then whatever the client sends next (a disconnect)."""
    sent = False

    async def replayed() -> dict:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


def _too_large(size: int | None, limit: int) -> dict:
    told = f"{size:,} bytes" if size is not None else "larger than the limit"
    return {
        "error": f"request body is {told}; the limit is {limit:,} bytes: send fewer mentions per request, "
        f"or start the server with a larger --max-body-bytes"
    }


async def _redirect(send: Any, location: str) -> None:
    headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0")]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def _reply(send: Any, status: int, body: dict) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
