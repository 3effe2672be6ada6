"""Keyboard only, a phone by touch, accessibility, and a dropped socket that resumes."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, WebSocketRoute, expect

from tests.api.helpers import choose
from tests.web.conftest import Contexts
from tests.web.helpers import (
    choose_discard,
    click_turn,
    play_until,
    start_bot_match,
    version,
    wait_actionable,
    wait_changed,
)

AXE = Path(__file__).resolve().parents[2] / "web" / "node_modules" / "axe-core" / "axe.min.js"


def active(page: Page, expression: str) -> Any:
    return page.evaluate(f"(() => {{ const a = document.activeElement; return {expression}; }})()")


def tab_to(page: Page, test: str) -> None:
    """Press Tab until the focused element passes ``test`` (a JS expression on ``a``)."""
    for _ in range(60):
        if active(page, f"!!a && ({test})"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {test}")


def key_turn(page: Page) -> None:
    """One move with the keyboard: from the hand, ↑ to the buttons, ← → and Enter."""
    before = version(page)
    if not active(page, "a.matches('.hand-card, .actions button')"):
        tab_to(page, "a.matches('.hand-card')")
    wanted = None
    for action in ("biggin", "gin", "knock", "pass", "stock"):
        if page.locator(f".actions [data-action={action}]").count():
            wanted = action
            break
    if wanted:
        if active(page, "a.matches('.hand-card')"):
            page.keyboard.press("ArrowUp")
        for _ in range(8):
            if active(page, f"a.dataset.action === '{wanted}'"):
                break
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        wait_changed(page, before)
        return
    card = choose_discard(page)
    if not active(page, "a.matches('.hand-card')"):
        page.keyboard.press("ArrowDown")
    for _ in range(12):
        if active(page, f"a.dataset.card === '{card}'"):
            break
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_selector(f".hand-card[data-card='{card}'].selected")
    page.keyboard.press("Enter")
    wait_changed(page, before)


def test_a_whole_hand_with_the_keyboard_alone(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    page.goto("/")
    tab_to(page, "a.name === 'name'")
    page.keyboard.type("Teclado")
    tab_to(page, "a.textContent.includes('TITO')")
    page.keyboard.press("Enter")
    page.wait_for_selector(".game")
    moves = 0
    while page.get_attribute(".game", "data-phase") != "over":
        wait_actionable(page)
        if page.get_attribute(".game", "data-phase") == "over":
            break
        key_turn(page)
        moves += 1
        assert moves < 200
    expect(page.locator(".result-board [data-outcome]")).to_be_visible()
    # The result board takes the focus: Enter deals the next hand (or it is a rematch).
    if page.locator(".match-over").count() == 0:
        assert active(page, "a.textContent.includes('PRÓXIMA MÃO')")
        page.keyboard.press("Enter")
        expect(page.locator(".scoreboard")).to_contain_text("Mão 2")
    # P opens the menu and Esc closes it; M switches the sound.
    page.keyboard.press("p")
    expect(page.locator(".menu")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator(".menu")).to_have_count(0)


def test_a_phone_plays_a_hand_by_touch(contexts: Contexts) -> None:
    phone = contexts.new(
        viewport={"width": 390, "height": 844},
        has_touch=True,
        is_mobile=True,
        device_scale_factor=2,
    )
    page = phone.new_page()
    page.goto("/")
    page.tap("input[name=name]")
    page.fill("input[name=name]", "Celular")
    page.tap("button.bot:has-text('TITO')")
    page.wait_for_selector(".game")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    play_until(page, "hand", tap=True)
    expect(page.locator(".result-board [data-outcome]")).to_be_visible()
    page.tap(".result-actions button.link")  # close the board: the chat is a button on a phone
    page.tap(".chat-toggle")
    expect(page.locator(".chat.open")).to_be_visible()


def violations(page: Page) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = page.evaluate(
        """async () => (await axe.run()).violations.map(v => ({
            id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 3)
        }))"""
    )
    return [v for v in found if v["impact"] in ("serious", "critical")]


def test_no_serious_accessibility_violations_on_the_start_page_and_the_table(
    contexts: Contexts,
) -> None:
    page = contexts.new().new_page()
    page.goto("/")
    page.wait_for_selector("input[name=name]")
    assert violations(page) == []
    start_bot_match(page, "Axe", "LUNA")
    wait_actionable(page)
    assert violations(page) == []


def test_a_dropped_socket_reconnects_and_misses_nothing(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    urls: list[str] = []
    open_routes: list[WebSocketRoute] = []
    blocked = [False]

    def route(ws: WebSocketRoute) -> None:
        urls.append(ws.url)
        if blocked[0]:
            ws.close(code=4000, reason="still down")
            return
        ws.connect_to_server()
        open_routes.append(ws)

    page.route_web_socket(re.compile(r".*/v1/tables/[0-9a-f]+/ws.*"), route)
    table_id = start_bot_match(page, "Rede", "TITO")
    wait_actionable(page)
    click_turn(page)
    wait_actionable(page)

    blocked[0] = True
    open_routes[-1].close(code=4000, reason="dropped")
    expect(page.locator(".conn.offline")).to_be_visible()
    token = page.evaluate("JSON.parse(localStorage.getItem('ginrummy.player')).token")
    base = page.url.split("/t/")[0]
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as http:
        r = http.post(f"/v1/tables/{table_id}/chat", json={"text": "dito durante a queda"})
        assert r.status_code == 200, r.text
        # A move from another device while this page is away (the bot answers it, too).
        view = http.get(f"/v1/tables/{table_id}").json()
        waited = time.monotonic() + 20
        while not view["game"]["legal"]["actions"] and time.monotonic() < waited:
            time.sleep(0.1)  # the bot still thinking: its move comes over the bus meanwhile
            view = http.get(f"/v1/tables/{table_id}").json()
        # Whatever this seat may do now (pass, draw, discard, knock...): the page's own move
        # may have left the turn at any step.
        path, body = choose(view)
        r = http.post(f"/v1/tables/{table_id}/{path}", json=body)
        assert r.status_code == 200, r.text
        behind = http.get(f"/v1/tables/{table_id}").json()["seq"]
        assert behind > view["seq"]
        blocked[0] = False
        expect(page.locator(".conn.offline")).to_have_count(0, timeout=20_000)
        expect(page.locator(".chat .lines")).to_contain_text("dito durante a queda")
        resumed = [u for u in urls if "since=" in u]
        assert resumed, urls
        since = int(re.search(r"since=(\d+)", resumed[-1]).group(1))  # type: ignore[union-attr]
        assert since < behind
        # The bot may move on meanwhile: the page shows this version or a newer one.
        latest = http.get(f"/v1/tables/{table_id}").json()
        page.wait_for_function(
            "v => Number(document.querySelector('.game')?.dataset.version) >= v",
            arg=latest["version"],
        )
    wait_actionable(page)
    assert click_turn(page)
