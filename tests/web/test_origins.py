"""Origins and the client's security headers, over HTTP and WebSocket (no browser here; the
browser's side is tests/web/test_e2e_origins.py)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from app.api.http.routes.web import WEB_DIST
from tests.api.conftest import Server, start_server

ALLOWED = "http://127.0.0.1:1"


@pytest.fixture(scope="module")
def origins_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("origins") / "db.sqlite"
    server = start_server(f"sqlite+aiosqlite:///{path}", allowed_origins=f"{ALLOWED}, ")
    yield server
    server.stop()


def test_the_built_page_has_no_inline_script() -> None:
    html = (WEB_DIST / "index.html").read_text()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S | re.I)
    assert scripts, "no script at all"
    for attributes, body in scripts:
        assert 'src="/' in attributes and not body.strip()
    assert not re.search(r"\son[a-z]+=", html, flags=re.I), "an inline event handler"


def test_the_client_pages_carry_the_security_headers(origins_server: Server) -> None:
    for path in ("/", "/t/abc", "/assets/" + _asset()):
        r = httpx.get(origins_server.url + path)
        assert r.status_code == 200, path
        csp = r.headers["content-security-policy"]
        assert "script-src 'self';" in csp and "unsafe-inline" not in csp.split("style-src")[0]
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"


def _asset() -> str:
    return next(p.name for p in (WEB_DIST / "assets").iterdir() if p.suffix == ".js")


def test_a_preflight_is_answered_for_an_allowed_origin_only(origins_server: Server) -> None:
    ask = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
    }
    r = httpx.options(f"{origins_server.url}/v1/tables", headers={"Origin": ALLOWED, **ask})
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == ALLOWED
    assert "idempotency-key" in r.headers["access-control-allow-headers"].lower()
    r = httpx.options(
        f"{origins_server.url}/v1/tables", headers={"Origin": "http://evil.test", **ask}
    )
    assert r.status_code == 400 and "access-control-allow-origin" not in r.headers
    r = httpx.get(f"{origins_server.url}/healthz", headers={"Origin": ALLOWED})
    assert r.headers["access-control-allow-origin"] == ALLOWED
    r = httpx.get(f"{origins_server.url}/healthz", headers={"Origin": "http://evil.test"})
    assert "access-control-allow-origin" not in r.headers


def _first(server: Server, origin: str | None) -> tuple[dict[str, object], int | None]:
    # Synchronous: Playwright's sync API holds an event loop in this thread (tests/web).
    url = server.url.replace("http", "ws", 1) + "/v1/tables/nope/ws"
    with connect(url, origin=origin) as ws:  # type: ignore[arg-type]
        first = json.loads(ws.recv(timeout=30))
        with contextlib.suppress(ConnectionClosed):
            ws.recv(timeout=30)
        return first, ws.close_code


def test_a_socket_checks_the_origin_a_browser_sends(origins_server: Server) -> None:
    # An unknown table: past the origin check, the socket learns that (4404).
    for origin in (None, ALLOWED, origins_server.url):
        first, code = _first(origins_server, origin)
        assert (first["code"], code) == ("table_not_found", 4404), origin
    first, code = _first(origins_server, "http://evil.test")
    assert (first["code"], code) == ("origin_not_allowed", 4403)


def test_the_default_allows_only_the_servers_own_origin(tmp_path: Path) -> None:
    server = start_server(f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}")
    try:
        ask = {"Origin": ALLOWED, "Access-Control-Request-Method": "POST"}
        assert httpx.options(f"{server.url}/v1/tables", headers=ask).status_code == 400
        ask["Origin"] = server.url
        r = httpx.options(f"{server.url}/v1/tables", headers=ask)
        assert r.status_code == 200, r.text
    finally:
        server.stop()
