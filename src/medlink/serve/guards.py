"""What every request passes before a route sees it: the API key, the body-size limit and the metrics clock.

One plain ASGI middleware rather than three: it runs on every request, so it stays small and does no parsing.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from medlink.serve.metrics import ServiceMetrics
from medlink.serve.settings import ServiceSettings
from medlink.serve.web.pages import KEY_COOKIE, OPEN_PAGE_PATHS, is_page, key_redirect, session_token

LOOPBACK_NAMES = frozenset({"localhost", "localhost."})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Every header the guard reads from a request (tests/test_complexity.py sends each at length).
READ_HEADERS = (b"host", b"origin", b"x-api-key", b"authorization", b"cookie", b"content-length")
CLIENT_LEFT = 499  # the status metrics count for a request whose client went away first (nginx's)
LONGEST_COOKIE_HEADER = 8_192  # what browsers send at most for one site (RFC 6265 asks them for 4,096 a cookie)
OPEN_PATHS = frozenset({"/health", *OPEN_PAGE_PATHS})  # load balancers probe /health; the page's key form and assets
ROUTES = (
    "/health",
    "/metrics",
    "/docs",
    "/openapi.json",
    "/v1/link",
    "/v1/trials/normalize",
    "/v1/trials/match",
    "/v1/annotate",
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
        self._session = session_token(settings.api_key) if settings.api_key else b""
        self._hosts = frozenset(name.lower() for name in settings.allowed_hosts)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        answered = False

        async def send_and_note(message: dict) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        try:
            if self._key is None and (refused := self._unkeyed_refusal(scope)):
                await _reply(send_and_note, 400 if refused.startswith("host") else 403, {"error": refused})
                return
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
            body = await _read_body(receive, limit)  # here, up to the limit: a chunked body declares no size
            if body is None:
                await _reply(send_and_note, 413, _too_large(None, limit))
                return
            # The app never reads cookies (the key's is read above), and FastAPI parses them for every route with
            # http.cookies' unquoting, which is quadratic in Python 3.11.7 (CVE-2024-7592): they stop here.
            scope = {**scope, "headers": [(name, value) for name, value in scope["headers"] if name != b"cookie"]}
            left = _answer_while_connected(self.app(scope, _replay(body), send_and_note), receive, lambda: answered)
            if await left:
                status = CLIENT_LEFT
        finally:
            self.metrics.observe_request(route_label(scope["path"]), status, time.perf_counter() - started)

    def _unkeyed_refusal(self, scope: dict) -> str | None:
        """Why a request to a service without a key is refused: addressed to a host name it does not answer to (a
        page whose own name was made to resolve here: DNS rebinding), or sent by a browser for another site's page
        (a form's POST, an image's GET that would make it link a thousand terms; following a shared link, a
        navigation, is no such request)."""
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        name = (host.rsplit(":", 1)[0] if not host.endswith("]") else host).strip("[]").lower()
        # No Host at all is an HTTP/1.0 client (a load balancer's probe): browsers always send one.
        known = name in LOOPBACK_NAMES or _is_address(name) or name in self._hosts
        if host and not known and scope["path"] != "/health":  # probes may use any name: /health shows nothing
            return f"host {host!r} is not one this service answers to: start it with --allowed-host {name or 'NAME'}"
        # A browser says where a request comes from: Sec-Fetch-Site (every current browser), else Origin ("null"
        # from a sandboxed frame or a page with no referrer). Clients that are not browsers send neither.
        site = headers.get(b"sec-fetch-site", b"").decode("latin-1")
        mode = headers.get(b"sec-fetch-mode", b"").decode("latin-1")
        if site in ("cross-site", "same-site") and (scope["method"] not in SAFE_METHODS or mode != "navigate"):
            return f"a request from another site ({site}) is refused"
        origin = headers.get(b"origin", b"").decode("latin-1")
        if scope["method"] not in SAFE_METHODS and site != "same-origin" and origin and not _same(origin, host):
            return f"a request from another site ({origin}) is refused"
        return None

    def _authorized(self, scope: dict) -> bool:
        """The key from a header, or for the web page's paths from its session cookie (SameSite=Strict: another
        site cannot make a browser send it; the JSON API takes a header only)."""
        headers = dict(scope["headers"])
        given = headers.get(b"x-api-key")
        bearer = headers.get(b"authorization", b"")
        if given is None and bearer[:7].lower() == b"bearer ":
            given = bearer[7:].strip()
        if given is None and is_page(scope["path"]):
            session = _cookie(headers.get(b"cookie", b""), KEY_COOKIE)
            return session is not None and hmac.compare_digest(session, self._session)
        return given is not None and hmac.compare_digest(given, self._key or b"")


def _same(origin: str, host: str) -> bool:
    return origin != "null" and urlsplit(origin).netloc.lower() == host.lower()


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _cookie(header: bytes, name: str) -> bytes | None:
    """The value of cookie ``name``, read by hand: ``http.cookies`` unquotes in quadratic time (CVE-2024-7592 in
    Python 3.11.7), and this runs on the event loop for every page request. A header longer than any browser
    sends is no session."""
    if len(header) > LONGEST_COOKIE_HEADER:
        return None
    wanted = name.encode("latin-1")
    for pair in header.split(b";"):
        key, equals, value = pair.partition(b"=")
        if equals and key.strip() == wanted:
            value = value.strip()
            return value[1:-1] if len(value) >= 2 and value[:1] == value[-1:] == b'"' else value
    return None


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


def _replay(body: bytes) -> Any:
    """The app's ``receive``: ``body``, then (the guard listens to the client itself) nothing until the app is
    cancelled."""
    sent = False

    async def replayed() -> dict:
        nonlocal sent
        if sent:
            await asyncio.Event().wait()  # never set: the guard cancels the app when its client goes away
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


async def _answer_while_connected(answering: Awaitable[None], receive: Any, answered: Callable[[], bool]) -> bool:
    """Run ``answering`` (the app on a request) until it ends, or until the client goes away before its answer
    is sent: then it is cancelled, and the work it waits for with it (neither uvicorn nor Starlette cancel it: a
    client that sent a heavy request and left kept a worker busy). True when the client left."""
    task = asyncio.ensure_future(answering)
    watcher = asyncio.ensure_future(_disconnect(receive))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            task.result()  # the app's own errors go on up
            return False
        if answered():  # the answer is out; the app is only finishing
            await task
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return True
    finally:
        watcher.cancel()


async def _disconnect(receive: Any) -> None:
    """Returns when the client is gone (uvicorn also says so once the answer is complete)."""
    while (await receive())["type"] != "http.disconnect":
        pass


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
