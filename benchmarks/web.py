"""The web client's size and the table page's time to interactive from a cold load.

    python benchmarks/web.py [--runs 7]

Prints the gzipped size of the built JavaScript and CSS (``web/dist``), then starts a server
on a temp SQLite file, seats a player against TITO over HTTP, and opens the table page in a
fresh Chromium context each run (empty cache, the token put in localStorage before the page
loads). Interactive = the player's cards are in the page as buttons, measured in the page by
``performance.now()`` from the navigation's start. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.api.http.routes.web import WEB_DIST
from tests.api.conftest import start_server
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS

# Records when the first card of the player's hand is in the DOM.
WATCH = """
new MutationObserver((_, observer) => {
  if (document.querySelector('.hand .hand-card')) {
    window.__interactive = performance.now();
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""


def gz(pattern: str) -> int:
    return sum(len(gzip.compress(p.read_bytes(), 9)) for p in (WEB_DIST / "assets").glob(pattern))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    js, css = gz("*.js"), gz("*.css")
    print(f"JavaScript {js / 1024:.1f} KiB gzipped, CSS {css / 1024:.1f} KiB gzipped")
    times: list[float] = []
    loaded: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(f"sqlite+aiosqlite:///{tmp}/bench.db")
        try:
            with httpx.Client(base_url=server.url) as http:
                player = http.post("/v1/players", json={"name": "Bench"}).json()
                auth = {"Authorization": f"Bearer {player['token']}"}
                table = http.post("/v1/tables", json={}, headers=auth).json()
                tid = table["table_id"]
                http.post(f"/v1/tables/{tid}/bot", json={"level": "easy"}, headers=auth)
                http.post(f"/v1/tables/{tid}/start", headers=auth)
            stored = json.dumps({k: player[k] for k in ("id", "name", "token")})
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for _ in range(args.runs):
                    context = browser.new_context(base_url=server.url)
                    context.add_init_script(
                        f"localStorage.setItem('ginrummy.player', {json.dumps(stored)});" + WATCH
                    )
                    page = context.new_page()
                    page.goto(f"/t/{tid}")
                    page.wait_for_function("window.__interactive !== undefined")
                    times.append(float(page.evaluate("window.__interactive")))
                    loaded.append(
                        float(
                            page.evaluate(
                                "performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"
                            )
                        )
                    )
                    context.close()
                browser.close()
        finally:
            server.stop()
    median = statistics.median(times)
    print(
        f"table page interactive from a cold load: median {median:.0f} ms, "
        f"min {min(times):.0f}, max {max(times):.0f} ({args.runs} runs); "
        f"DOMContentLoaded median {statistics.median(loaded):.0f} ms"
    )
    print(
        json.dumps(
            {
                "js_gzip_bytes": js,
                "css_gzip_bytes": css,
                "interactive_ms_median": round(median, 1),
                "interactive_ms_max": round(max(times), 1),
                "dom_content_loaded_ms_median": round(statistics.median(loaded), 1),
                "runs": args.runs,
            }
        )
    )


if __name__ == "__main__":
    main()
