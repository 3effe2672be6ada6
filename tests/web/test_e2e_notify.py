"""``your_turn`` while the tab is in the background: the tab's title and a notification,
from the table's socket on the table page and from the player's socket anywhere else."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import Page

from tests.web.conftest import Contexts

# The page is "in the background" when the test says so; notifications are recorded.
BACKGROUND = """
Object.defineProperty(document, 'hidden', {configurable: true, get: () => !!window.__hidden});
window.__notes = [];
window.Notification = class {
  static permission = 'granted';
  static requestPermission() { return Promise.resolve('granted'); }
  constructor(title, options) { window.__notes.push({title, tag: options && options.tag}); }
};
"""


def view(http: httpx.Client, table_id: str, token: str) -> dict[str, Any]:
    r = http.get(f"/v1/tables/{table_id}", headers={"Authorization": f"Bearer {token}"})
    body: dict[str, Any] = r.json()
    return body


def move(http: httpx.Client, table_id: str, token: str) -> None:
    """Pass the upcard or draw from the stock and discard: enough to hand the turn over."""
    auth = {"Authorization": f"Bearer {token}"}
    legal = view(http, table_id, token)["game"]["legal"]
    if "pass" in legal["actions"]:
        r = http.post(f"/v1/tables/{table_id}/moves/pass", headers=auth)
        assert r.status_code == 200, r.text
        return
    if "draw_stock" in legal["actions"]:
        r = http.post(f"/v1/tables/{table_id}/moves/draw", json={"source": "stock"}, headers=auth)
        assert r.status_code == 200, r.text
        legal = view(http, table_id, token)["game"]["legal"]
    card = legal["discards"][-1]
    r = http.post(f"/v1/tables/{table_id}/moves/discard", json={"card": card}, headers=auth)
    assert r.status_code == 200, r.text


def turn_of(http: httpx.Client, table_id: str, token: str) -> int:
    return int(view(http, table_id, token)["game"]["hand"]["turn"])


def backgrounded_until_my_turn(page: Page, http: httpx.Client, table_id: str, bo: str) -> None:
    page.evaluate("window.__hidden = true; window.__notes = []; document.title = 'Gin Rummy'")
    move(http, table_id, bo)
    page.wait_for_function("document.title.includes('Sua vez')")
    page.wait_for_function("window.__notes.length > 0")
    notes = page.evaluate("window.__notes")
    assert notes[-1]["tag"] == table_id
    assert "sua vez" in notes[-1]["title"]


def test_your_turn_in_the_background_sets_the_title_and_notifies(contexts: Contexts) -> None:
    context = contexts.new()
    context.add_init_script(BACKGROUND)
    page = context.new_page()
    page.goto("/")
    page.fill("input[name=name]", "Ada")
    page.click("button:has-text('CRIAR CONVITE')")
    code = page.input_value("#invite-link").rsplit("invite=", 1)[1]
    table_id = page.url.rsplit("/", 1)[-1]
    ada = str(page.evaluate("JSON.parse(localStorage.getItem('ginrummy.player')).token"))
    with httpx.Client(base_url=page.url.split("/t/")[0]) as http:
        bo = http.post("/v1/players", json={"name": "Bo"}).json()["token"]
        joined = http.post(f"/v1/invites/{code}", headers={"Authorization": f"Bearer {bo}"})
        assert joined.status_code == 200, joined.text
        page.click("button:has-text('COMEÇAR A PARTIDA')")
        page.wait_for_selector(".game")
        if turn_of(http, table_id, ada) == 0:
            move(http, table_id, ada)
        # On the table page: the table's socket says it is Ada's turn.
        backgrounded_until_my_turn(page, http, table_id, bo)
        page.evaluate(
            "window.__hidden = false; document.dispatchEvent(new Event('visibilitychange'))"
        )
        # Shown again while it is still Ada's turn: the table's own title keeps saying so
        # (once the table's socket has told the board: the player's socket may come first).
        page.wait_for_function("document.title === '● Sua vez — Gin Rummy'", timeout=10_000)

        # Elsewhere (the start page): the player's socket says it.
        page.click("a.home")
        page.wait_for_selector("input[name=name]")
        move(http, table_id, ada)
        backgrounded_until_my_turn(page, http, table_id, bo)
