"""End-to-end tests of the web client: a real server on SQLite, Debian's Chromium, Playwright.

One server and one browser per session (each test opens its own contexts). Bots move without
their pauses. The client must have been built (``make test`` builds ``web/dist`` first).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright, sync_playwright

from app.api.http.routes.web import WEB_DIST
from tests.api.conftest import Server, start_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent.name == "web" and item.path.name.startswith("test_e2e"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not (WEB_DIST / "index.html").is_file():
        pytest.fail("the web client is not built: run `make test` (or `make web/dist/index.html`)")
    path = tmp_path_factory.mktemp("web") / "ginrummy.db"
    running = start_server(f"sqlite+aiosqlite:///{path}", chat_rate_count=50)
    yield running
    running.stop()


# Package-scoped: the sync API runs an event loop in this thread while it is open, and the
# asyncio tests collected after tests/web (clients/python/tests) need the thread without one.
@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield launched
    launched.close()


class Contexts:
    """Browser contexts for one test (each a separate person), closed at its end."""

    def __init__(self, browser: Browser, base_url: str) -> None:
        self.browser = browser
        self.base_url = base_url
        self.opened: list[BrowserContext] = []

    def new(self, **options: object) -> BrowserContext:
        options.setdefault("locale", "pt-BR")
        options.setdefault("viewport", {"width": 1280, "height": 800})
        # The tests' own probes (string waits, axe) are scripts the pages' CSP forbids.
        options.setdefault("bypass_csp", True)
        context = self.browser.new_context(base_url=self.base_url, **options)  # type: ignore[arg-type]
        context.set_default_timeout(20_000)
        self.opened.append(context)
        return context

    def close(self) -> None:
        for context in self.opened:
            context.close()


@pytest.fixture
def contexts(browser: Browser, web_server: Server) -> Iterator[Contexts]:
    opened = Contexts(browser, web_server.url)
    yield opened
    opened.close()
