"""/docs and /redoc render in real Chromium under their own Content-Security-Policy: the
browser enforces it (no ``bypass_csp``), and refuses nothing either page loads or runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage

from tests.api.conftest import Server, start_server


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Server]:
    server = start_server(f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}")
    yield server
    server.stop()


@pytest.mark.parametrize(
    ("page_path", "rendered"),
    [
        ("/docs", ".swagger-ui .info .title"),
        ("/redoc", "h1"),
    ],
)
def test_the_docs_render_under_their_csp(
    browser: Browser, api: Server, page_path: str, rendered: str
) -> None:
    context = browser.new_context()
    refused: list[str] = []
    outside: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        text = message.text
        # ReDoc's "by Redocly" logo comes from its CDN: the policy keeps it out.
        if "Content Security Policy" in text and "https://cdn.redoc.ly/" not in text:
            refused.append(text)

    try:
        page = context.new_page()
        page.on("console", on_console)
        page.on(
            "requestfinished",
            lambda r: None if r.url.startswith(api.url) else outside.append(r.url),
        )
        response = page.goto(api.url + page_path)
        assert response is not None and response.ok
        assert "script-src 'self'" in response.headers["content-security-policy"]
        title = page.locator(rendered).first
        title.wait_for(timeout=20_000)
        assert "Gin Rummy server" in title.inner_text()
        # The operations are listed: the document was fetched and laid out.
        page.get_by_text("/v1/tables/{table_id}/moves/discard").first.wait_for(timeout=20_000)
        assert not refused, "\n".join(refused)
        # Nothing came from another host (a blob or a data URL is the page's own).
        assert not [u for u in outside if not u.startswith(("data:", "blob:"))], outside
    finally:
        context.close()
