"""The built client is served at ``/`` beside the API, which keeps its paths and errors."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from app.api.http.routes.web import WEB_DIST
from tests.api.conftest import Server


def test_the_client_pages_assets_and_api_share_one_server(web_server: Server) -> None:
    with httpx.Client(base_url=web_server.url) as http:
        index = http.get("/")
        assert index.status_code == 200
        assert '<div id="app">' in index.text
        assert index.headers["cache-control"] == "no-cache"
        # A page of the client (a table) gets the same document: the client routes it.
        page = http.get("/t/3c9d1f0e2b7a4e5d8c6b0a1f2e3d4c5b?invite=X")
        assert page.status_code == 200 and page.text == index.text
        script = re.search(r'src="(/assets/[^"]+\.js)"', index.text)
        assert script
        asset = http.get(script.group(1))
        assert asset.status_code == 200
        assert "immutable" in asset.headers["cache-control"]
        # The API is untouched: an unknown API path is still a JSON 404.
        missing = http.get("/v1/nothing-here")
        assert missing.status_code == 404
        assert missing.json()["code"]
        assert http.get("/healthz").json() == {"status": "ok"}
        assert http.get("/openapi.json").status_code == 200


def test_the_client_never_answers_for_an_api_path_or_another_method(web_server: Server) -> None:
    with httpx.Client(base_url=web_server.url) as http:
        # An API route with another method: 405 naming the route's own methods only.
        start = http.request("OPTIONS", "/v1/tables/3c9d1f0e2b7a4e5d8c6b0a1f2e3d4c5b/start")
        assert start.status_code == 405 and start.headers["Allow"] == "POST"
        # An unknown API path with a body's method is a JSON 404, not the client's 405.
        missing = http.post("/v1/nothing-here", json={})
        assert missing.status_code == 404 and missing.json()["code"] == "not_found"
        # A client's page answers GET and HEAD only.
        page = http.post("/t/3c9d1f0e2b7a4e5d8c6b0a1f2e3d4c5b", json={})
        assert page.status_code == 405 and page.headers["Allow"] == "GET, HEAD"


def test_the_server_serves_the_build_of_this_repository() -> None:
    # Where the module that mounts it finds the build: a move of that module once pointed it
    # at app/web/dist, and every page answered 404.
    assert Path(__file__).resolve().parents[2] / "web" / "dist" == WEB_DIST
