"""A page served from another origin (a second local port) in real Chromium: it calls the API
and opens a socket when that origin is allowed; the browser refuses the API to it (CORS) and
the server refuses it the socket (4403) when it is not."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.api.conftest import Server, start_server

# Runs in the page: create a player, get a socket ticket, open the notifications socket.
CALL_THE_API = """async (api) => {
  const ws = (path) => new Promise((resolve) => {
    const socket = new WebSocket(api.replace("http", "ws") + path);
    socket.onmessage = (m) => { resolve(JSON.parse(m.data)); socket.close(); };
    socket.onclose = (c) => resolve({ closed: c.code });
  });
  let fetched;
  try {
    const r = await fetch(api + "/v1/players", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Far" }),
    });
    const player = await r.json();
    const t = await fetch(api + "/v1/ws-tickets", {
      method: "POST",
      headers: { Authorization: "Bearer " + player.token },
    });
    fetched = (await t.json()).ticket;
  } catch (e) {
    return { api: "refused: " + e, socket: await ws("/v1/tables/nope/ws") };
  }
  return { api: "ok", socket: await ws("/v1/players/me/ws?ticket=" + fetched) };
}"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def pages(tmp_path: Path) -> Iterator[list[str]]:
    """Two static sites on their own ports (two origins), each with a blank page."""
    (tmp_path / "index.html").write_text("<!doctype html><title>elsewhere</title>")
    servers = [
        ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(tmp_path)))
        for _ in range(2)
    ]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield [f"http://127.0.0.1:{s.server_address[1]}" for s in servers]
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def api(tmp_path: Path, pages: list[str]) -> Iterator[Server]:
    server = start_server(
        f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", allowed_origins=pages[0], ws_heartbeat=0.5
    )
    yield server
    server.stop()


def test_an_allowed_origin_calls_the_api_and_a_refused_one_cannot(
    browser: Browser, api: Server, pages: list[str]
) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(pages[0] + "/index.html")
        allowed = page.evaluate(CALL_THE_API, api.url)
        assert allowed["api"] == "ok" and allowed["socket"]["type"] == "heartbeat", allowed
        page.goto(pages[1] + "/index.html")
        refused = page.evaluate(CALL_THE_API, api.url)
        assert refused["api"].startswith("refused: TypeError"), refused
        assert refused["socket"]["code"] == "origin_not_allowed", refused
    finally:
        context.close()
