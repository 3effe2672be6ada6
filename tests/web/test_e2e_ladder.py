"""The bot ladder's page: reached from the tournament list, it shows a bot account that said it
is available among the anchors, with its range and games, in both languages; on a phone too."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.api.conftest import Server
from tests.web.conftest import Contexts


def test_the_ladder_page_shows_an_available_bot_among_the_anchors(
    contexts: Contexts, web_server: Server
) -> None:
    with httpx.Client(base_url=web_server.url, timeout=30) as http:
        bot = http.post("/v1/players", json={"name": "Ladderbot", "bot": True}).json()
        auth = {"Authorization": f"Bearer {bot['token']}"}
        r = http.put("/v1/bots/me/available", json={"available": True}, headers=auth)
        assert r.status_code == 200, r.text

    page = contexts.new(viewport={"width": 390, "height": 844}).new_page()
    page.goto("/tournaments")
    page.click("a[href='/ladder']")
    page.wait_for_url("**/ladder")
    expect(page.locator("h2")).to_have_text("Escada de robôs")
    rows = page.locator(".ladder-standings tbody tr")
    expect(rows.filter(has_text="Ladderbot")).to_have_count(1)
    for name in ("TITO", "CARMEN", "LUNA"):
        expect(rows.filter(has_text=name)).to_contain_text("âncora")
    expect(page.locator("main")).to_contain_text("Robôs disponíveis agora: 1")
    expect(rows.filter(has_text="Ladderbot")).to_contain_text("800–2200")  # 1500 ± 2 × 350

    page.click("header button.link")
    expect(page.locator("h2")).to_have_text("Bot ladder")
    expect(rows.filter(has_text="LUNA")).to_contain_text("anchor")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # the table fits the phone
