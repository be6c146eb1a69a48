"""The web page over HTTP, on a real uvicorn server with a small terminology: server-rendered results behind a
shareable URL, escaping, the security headers, the key form, and bad input answered on the page."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

httpx = pytest.importorskip("httpx", reason="the service tests need the [test] extras (httpx)")
pytest.importorskip("uvicorn", reason="the service tests need the [serve] extras")

from medlink.linking import Linker  # noqa: E402
from medlink.serve.app import create_app  # noqa: E402
from medlink.serve.settings import ServiceSettings  # noqa: E402
from medlink.terminology import Terminology  # noqa: E402
from medlink.terminology.records import Name, NameKind, make_concept  # noqa: E402
from support import serving  # noqa: E402


@pytest.fixture(scope="module")
def linker() -> Linker:
    terminology = Terminology.from_concepts(
        [
            make_concept(
                "MESH:D009203",
                "Myocardial Infarction",
                [Name("Heart Attack", NameKind.ENTRY_TERM)],
                parents=("MESH:D007238",),
                tree_numbers=("C14.280.647.500",),
            ),
            make_concept("MESH:D007238", "Infarction"),
            make_concept("MESH:D020521", "Stroke", parents=("MESH:D007238",)),
        ]
    )
    return Linker(terminology)


@pytest.fixture(scope="module")
def url(linker: Linker) -> Iterator[str]:
    yield from serving(create_app(linker, ServiceSettings(max_batch=3)))


@pytest.fixture(scope="module")
def keyed_url(linker: Linker) -> Iterator[str]:
    yield from serving(create_app(linker, ServiceSettings(api_key="s3cret")))


def test_a_shared_query_url_shows_its_results_without_javascript(url: str) -> None:
    page = httpx.get(f"{url}/", params={"q": "heart attack\nno such thing"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<a class="concept-id" href="/concept/MESH%3AD009203">MESH:D009203</a>' in page.text
    assert '<dd class="stage">exact</dd>' in page.text and "Heart Attack" in page.text
    assert 'class="result nil"' in page.text and "names no concept" in page.text  # the unknown term: nil, said so
    assert ">heart attack\nno such thing</textarea>" in page.text  # the form keeps the query


def test_everything_shown_is_escaped_and_the_policy_forbids_inline_script(url: str) -> None:
    attack = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    page = httpx.get(f"{url}/", params={"q": attack, "context": "</textarea><b>x</b>"})
    assert "<script>alert" not in page.text and "<img src=x" not in page.text and "<b>x</b>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy and "unsafe-inline" not in policy
    assert page.headers["x-content-type-options"] == "nosniff" and page.headers["referrer-policy"] == "same-origin"
    assert all('src="/static/' in tag for tag in page.text.split("<script")[1:])  # no inline script at all
    assert " style=" not in page.text  # nor inline style, which the policy would refuse


def test_the_concept_page_shows_names_tree_numbers_and_relatives(url: str) -> None:
    page = httpx.get(f"{url}/concept/MESH:D009203")
    assert page.status_code == 200
    assert "Heart Attack" in page.text and "C14.280.647.500" in page.text
    parent = httpx.get(f"{url}/concept/MESH:D007238").text
    assert 'href="/concept/MESH%3AD009203"' in parent and 'href="/concept/MESH%3AD020521"' in parent  # children
    assert httpx.get(f"{url}/concept/MESH:D020521").text.count("MESH:D009203") >= 1  # a sibling
    missing = httpx.get(f"{url}/concept/MESH:D0000")
    assert missing.status_code == 404 and "No concept" in missing.text


def test_bad_input_is_answered_on_the_page(url: str) -> None:
    too_many = httpx.get(f"{url}/", params={"q": "a\nb\nc\nd"})
    assert too_many.status_code == 413 and "the limit is 3" in too_many.text and 'role="alert"' in too_many.text
    no_index = httpx.post(f"{url}/trials", data={"note": "A 60-year-old man with diabetes."})
    assert no_index.status_code == 404 and "no trial index" in no_index.text
    not_json = httpx.post(f"{url}/trials/normalize", data={"record": '{"protocolSection": }'})
    assert not_json.status_code == 422 and "line 1, column 21: Expecting value" in not_json.text
    not_a_study = httpx.post(f"{url}/trials/normalize", data={"record": json.dumps({"id": 1})})
    assert not_a_study.status_code == 422 and "no protocolSection" in not_a_study.text
    assert httpx.get(f"{url}/static/../app.py").status_code == 404


def test_with_a_key_the_page_asks_for_it_once_and_the_api_still_wants_the_header(keyed_url: str) -> None:
    with httpx.Client(base_url=keyed_url) as browser:
        asked = browser.get("/", params={"q": "heart attack"})
        assert asked.status_code == 303 and asked.headers["location"].startswith("/key?next=")
        assert browser.get("/static/style.css").status_code == 200  # the form's assets are open
        wrong = browser.post("/key", data={"key": "guess", "next": "/?q=heart+attack"})
        assert wrong.status_code == 401 and "not this service" in wrong.text
        right = browser.post("/key", data={"key": "s3cret", "next": "/?q=heart+attack"})
        assert right.status_code == 303 and right.headers["location"] == "/?q=heart+attack"
        cookie = right.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert "MESH:D009203" in browser.get("/?q=heart+attack").text  # the cookie is kept and used
        assert browser.post("/v1/link", json={"mentions": ["heart attack"]}).status_code == 401  # header only
        elsewhere = browser.post("/key", data={"key": "s3cret", "next": "//evil.example/"})
        assert elsewhere.headers["location"] == "/"  # never redirected off this service


def test_annotate_endpoint_finds_links_and_qualifies_mentions(url: str) -> None:
    body = {"documents": [{"id": "n1", "text": "No heart attack. Possible heart attack."}, {"text": "Nothing."}]}
    response = httpx.post(f"{url}/v1/annotate", json=body)
    assert response.status_code == 200, response.text
    first, second = response.json()["documents"]
    assert first["id"] == "n1" and second["annotations"] == []
    found = [(a["text"], a["concepts"], a["negated"], a["uncertain"]) for a in first["annotations"]]
    assert found == [("heart attack", ["MESH:D009203"], True, False), ("heart attack", ["MESH:D009203"], False, True)]
    too_many = httpx.post(f"{url}/v1/annotate", json={"documents": [{"text": "a"}] * 4})
    assert too_many.status_code == 413
    unknown = httpx.post(f"{url}/v1/annotate", json={"documents": [{"text": "x"}], "entity_type": "Planet"})
    assert unknown.status_code == 422 and "entity_type" in unknown.text  # the schema lists the kinds
