"""The routes of the web page. Each renders a template from ``templates/`` around the same :class:`ServiceCore`
the API uses, so a page answers within the API's limits and budgets; assets come from ``static/``.

With an API key set, a page asks for the key once (``/key``) and keeps it in a session cookie (HttpOnly,
SameSite=Strict, so another site cannot make the browser use it); the JSON API still wants the key in a header.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from medlink.errors import MedlinkError
from medlink.linking import Mention
from medlink.serve.busy import Busy
from medlink.serve.core import NO_TRIAL_INDEX, ServiceCore
from medlink.serve.text_checks import NOT_TEXT, is_text, text_problems
from medlink.version import __version__

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
ASSETS = {"style.css": "text/css; charset=utf-8", "page.js": "text/javascript; charset=utf-8"}
KEY_COOKIE = "medlink_key"
REGISTRY = "https://clinicaltrials.gov/study/"
RELATED_SHOWN = 60  # children or siblings listed on a concept page before "and N more"
DEFAULT_TRIALS_SHOWN = 10
# Everything from this service only; no inline script or style; no framing; forms post here only.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    # a query or a note must not leak to the registry's site through a link; and same-origin, not no-referrer:
    # under no-referrer a browser sends "Origin: null" with the page's own forms, which the guard cannot tell apart
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",  # results may hold patient notes
}


def is_page(path: str) -> bool:
    """The paths whose key may come from the session cookie (the guard lets the JSON API use a header only)."""
    return path in ("/", "/trials", "/trials/normalize") or path.startswith("/concept/")


OPEN_PAGE_PATHS = frozenset({"/key", *(f"/static/{name}" for name in ASSETS)})


Page = Callable[..., HTMLResponse]  # page(template, status=200, **values): a rendered template


def add_pages(app: FastAPI, core: ServiceCore) -> None:
    templates = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    templates.globals["zip"] = zip
    templates.filters["verdict"] = lambda ok: {True: "eligible", False: "not eligible"}.get(
        ok, "no verdict (the trial sets no limit, or the note does not say)"
    )
    templates.filters["years"] = lambda age: "unknown" if age is None else f"{age:g}"

    def page(template: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = templates.get_template(template).render(
            version=__version__, trials=core.matcher is not None, keyed=core.settings.api_key is not None, **values
        )
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    _add_link_pages(app, core, page)
    _add_trial_pages(app, core, page)
    _add_key_pages(app, core, page)


def _add_link_pages(app: FastAPI, core: ServiceCore, page: Page) -> None:
    settings, linker = core.settings, core.linker

    @app.get("/", include_in_schema=False)
    async def link_page(q: str = "", context: str = "") -> HTMLResponse:
        terms = [line.strip() for line in q.splitlines() if line.strip()]
        problems: list[str] = []
        results: list[dict[str, Any]] = []
        status = 200
        if len(terms) > settings.max_batch:
            problems, status = [f"{len(terms):,} terms; the limit is {settings.max_batch:,} at a time"], 413
        elif terms:
            mentions: list[str | Mention] = [Mention(term, context) if context.strip() else term for term in terms]
            problems = text_problems(
                mentions, linker.config.max_mention_chars, settings.max_document_chars, what="terms"
            )
            status = 422 if problems else 200
            if not problems:
                try:
                    results = [_result_view(result, linker) for result in await core.link(mentions)]
                except Busy as error:
                    problems, status = [str(error)], 503
        return page(
            "link.html", status, q=q, context=context, results=results, problems=problems, max_batch=settings.max_batch
        )

    @app.get("/concept/{concept_id}", include_in_schema=False)
    async def concept_page(concept_id: str) -> HTMLResponse:
        # in a thread: the first children or siblings asked for build the terminology's table of them (seconds)
        return await asyncio.to_thread(concept_view, concept_id)

    def concept_view(concept_id: str) -> HTMLResponse:
        found = linker.terminology.get(concept_id)
        if found is None:
            return page("missing.html", 404, what=f"No concept {concept_id!r} in this terminology.")
        names: dict[str, list[str]] = defaultdict(list)
        for name in found.names:
            names[str(name.kind)].append(name.text)
        return page(
            "concept.html",
            concept=found,
            names=dict(names),
            parents=_related(linker, linker.terminology.parents(found.id)),
            children=_related(linker, linker.terminology.children(found.id)),
            siblings=_related(linker, linker.terminology.siblings(found.id)),
        )


def _add_trial_pages(app: FastAPI, core: ServiceCore, page: Page) -> None:
    settings = core.settings

    @app.get("/trials", include_in_schema=False)
    async def trials_page() -> HTMLResponse:
        return page("trials.html", note="", record="", top=DEFAULT_TRIALS_SHOWN)

    @app.post("/trials", include_in_schema=False)
    async def match_page(request: Request) -> HTMLResponse:
        form = await _form(request)
        note, top = form.get("note", ""), _top(form.get("top", ""))
        values: dict[str, Any] = {"note": note, "record": "", "top": top}
        if core.matcher is None:
            return page("trials.html", 404, problems=[NO_TRIAL_INDEX], **values)
        problems = text_problems([note], settings.max_note_chars, None, "note")
        if not note.strip():
            problems.append("the note is empty: paste a patient's note")
        if problems:
            return page("trials.html", 422, problems=problems, **values)
        from medlink.trials.matching.notes import read_note

        try:
            read_note(note)  # what is wrong with the note is the person's to fix; any other error is the server's
        except MedlinkError as error:
            return page("trials.html", 422, problems=[str(error)], **values)
        try:
            result = await core.match(note, top)
        except Busy as error:
            return page("trials.html", 503, problems=[str(error)], **values)
        return page("trials.html", match=result, registry=REGISTRY, **values)

    @app.post("/trials/normalize", include_in_schema=False)
    async def normalize_page(request: Request) -> HTMLResponse:
        from medlink.trials.readers import parse_api_study

        record_text = (await _form(request)).get("record", "")
        values: dict[str, Any] = {"note": "", "record": record_text, "top": DEFAULT_TRIALS_SHOWN}
        try:
            study = json.loads(record_text)
            if not is_text(json.dumps(study, ensure_ascii=False)):
                return page("trials.html", 422, problems=[f"the record {NOT_TEXT}"], **values)
            record = parse_api_study(study)
        except json.JSONDecodeError as error:
            problem = f"the record is not JSON: line {error.lineno}, column {error.colno}: {error.msg}"
            return page("trials.html", 422, problems=[problem], **values)
        except RecursionError:
            return page("trials.html", 422, problems=["the record's JSON is nested too deeply"], **values)
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            problem = f"the record is not a ClinicalTrials.gov API v2 study: {error}"
            return page("trials.html", 422, problems=[problem], **values)
        try:
            normalized = (await core.normalize([record]))[0]
        except Busy as error:
            return page("trials.html", 503, problems=[str(error)], **values)
        return page("trials.html", normalized=normalized, registry=REGISTRY, **values)


def _add_key_pages(app: FastAPI, core: ServiceCore, page: Page) -> None:
    settings = core.settings

    @app.get("/key", include_in_schema=False)
    async def key_page(next: str = "/") -> HTMLResponse:
        return page("key.html", next=_local(next))

    @app.post("/key", include_in_schema=False)
    async def take_key(request: Request) -> Response:
        form = await _form(request)
        target = _local(form.get("next", "/"))
        key = form.get("key", "")
        if settings.api_key is None or not hmac.compare_digest(key.encode(), settings.api_key.encode()):
            return page("key.html", 401, next=target, problems=["that is not this service's key"])
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(  # a session cookie holding a token made from the key, not the key itself
            KEY_COOKIE,
            session_token(key).decode(),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return response

    @app.get("/static/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        if name not in ASSETS:
            return page("missing.html", 404, what="No such file.")
        return Response(
            (STATIC / name).read_bytes(),
            media_type=ASSETS[name],
            headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "max-age=3600"},
        )


def session_token(key: str) -> bytes:
    """What the page's cookie holds: a keyed hash of the API key (a cookie read off a disk or a proxy's log gives
    page access to this service, never the key for its JSON API)."""
    return hmac.new(key.encode(), b"medlink page session", "sha256").hexdigest().encode()


def key_redirect(path: str, query: str) -> str:
    """Where the guard sends a page request that lacks the key: the key form, then back."""
    target = path + (f"?{query}" if query else "")
    return f"/key?next={quote(target, safe='')}"


def _result_view(result: Any, linker: Any) -> dict[str, Any]:
    """A link result as the page shows it: each concept with its preferred name, each candidate too."""
    names = linker.terminology.concept_preferred_name
    return {
        "mention": result.mention,
        "nil": not result.concepts,
        "stage": result.stage.value,
        "concepts": list(zip(result.concepts, result.preferred_names, strict=False)),
        "score": result.score,
        "matched_name": result.matched_name,
        "reason": result.reason,
        "several": result.several,
        "candidates": [
            {"id": c.concept_id, "name": c.name, "score": c.score, "preferred": _safe(names, c.concept_id)}
            for c in result.candidates
        ],
        "parts": [_result_view(part, linker) for part in result.parts],
    }


def _related(linker: Any, ids: tuple[str, ...]) -> dict[str, Any]:
    shown = [
        (concept_id, _safe(linker.terminology.concept_preferred_name, concept_id)) for concept_id in ids[:RELATED_SHOWN]
    ]
    return {"shown": shown, "more": max(0, len(ids) - RELATED_SHOWN)}


def _safe(name_of: Any, concept_id: str) -> str:
    try:
        return str(name_of(concept_id))
    except (KeyError, ValueError):
        return ""


async def _form(request: Request) -> dict[str, str]:
    """An urlencoded form (what the page's forms send), its first value per field."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return {key: values[0] for key, values in parse_qs(body, keep_blank_values=True).items()}


def _top(value: str) -> int:
    return int(value) if value.isdigit() and 0 < int(value) <= 100 else DEFAULT_TRIALS_SHOWN


def _local(target: str) -> str:
    """Only a path on this service (no scheme, no ``//host``): the key form must not redirect elsewhere."""
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"
