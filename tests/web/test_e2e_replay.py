"""A finished hand in the web client: the replay steps by keys, buttons and the move list,
LUNA's review beside each move, the result board's way in, and the profile's charts."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import httpx
from playwright.sync_api import Page, expect

from tests.api.helpers import Player, play_until, seated_table
from tests.web.conftest import Contexts
from tests.web.test_e2e_reach import violations


def _finished_hand(url: str) -> tuple[str, list[Player], int]:
    """A table whose first hand two players played out; the number of its moves."""

    async def play() -> tuple[str, list[Player], int]:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            table_id, players = await seated_table(client)
            await play_until(client, table_id, players, done="hand")
            hand = (await client.get(f"/v1/tables/{table_id}/hands/1")).json()
            return table_id, players, len(hand["steps"])

    # Playwright's own loop runs in this thread: the API calls get a thread of their own.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, play()).result()


def _as(page: Page, player: Player) -> None:
    """The page's browser plays as ``player`` (its token where the client keeps it)."""
    page.goto("/")
    me = {"id": player.id, "name": player.name, "token": player.token}
    page.evaluate("m => localStorage.setItem('ginrummy.player', m)", json.dumps(me))


def _current(page: Page) -> int:
    buttons = page.locator(".replay-moves li button")
    flags = buttons.evaluate_all("bs => bs.map(b => b.getAttribute('aria-current'))")
    return next(i for i, f in enumerate(flags) if f == "step")


def test_the_replay_steps_through_every_move_with_lunas_review(contexts: Contexts) -> None:
    url = contexts.base_url
    table_id, players, moves = _finished_hand(url)
    page = contexts.new().new_page()
    page.goto(f"/t/{table_id}/replay/1/1")
    expect(page.locator(".replay-moves li button")).to_have_count(moves + 1)
    assert _current(page) == 0
    page.keyboard.press("ArrowRight")
    assert _current(page) == 1
    expect(page.locator(".replay-now")).to_contain_text("1")
    page.keyboard.press("End")
    assert _current(page) == moves
    expect(page.locator("[data-step=next]")).to_be_disabled()
    page.click("[data-step=prev]")
    assert _current(page) == moves - 1
    page.keyboard.press("Home")
    assert _current(page) == 0
    page.locator(".replay-moves li button").nth(3).click()
    assert _current(page) == 3
    # The review arrives: each seat's summary, and LUNA's choice for the move shown.
    expect(page.locator(".review-summary tbody tr")).to_have_count(2, timeout=60_000)
    page.keyboard.press("End")
    expect(page.locator(".decision [data-luna], .replay-main .muted").first).to_be_visible()
    names = page.locator(".replay-seat h3 .name").all_text_contents()
    assert sorted(names) == sorted(p.name for p in players)
    assert violations(page) == []


def test_the_result_board_opens_the_review_and_the_phone_fits_it(contexts: Contexts) -> None:
    table_id, players, moves = _finished_hand(contexts.base_url)
    page = contexts.new(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    _as(page, players[0])
    page.goto(f"/t/{table_id}")
    page.locator(".result-board .review-open").click()
    page.wait_for_url(f"**/t/{table_id}/replay/1/1")
    expect(page.locator(".replay-moves li button")).to_have_count(moves + 1)
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 390, f"the replay is {wide} px wide on a 390 px phone"


def test_the_profile_draws_the_players_figures(contexts: Contexts) -> None:
    _, players, _ = _finished_hand(contexts.base_url)
    page = contexts.new(locale="en-US").new_page()
    page.goto(f"/p/{players[0].id}")
    expect(page.locator(".profile-main h1")).to_contain_text(players[0].name)
    expect(page.locator(".bar-row[data-group]")).to_have_count(8)
    expect(page.locator(".profile-main")).to_contain_text("No rated match yet.")
    assert violations(page) == []


def test_the_match_over_board_sums_the_reviews_of_its_hands(contexts: Contexts) -> None:
    async def play() -> tuple[str, Player, int]:
        async with httpx.AsyncClient(base_url=contexts.base_url, timeout=30) as client:
            while True:
                table_id, players = await seated_table(client, rules={"target": 40})
                end = await play_until(client, table_id, players)
                hands = len(end["game"]["match"]["history"])
                if hands > 1:
                    return table_id, players[0], hands

    with ThreadPoolExecutor(1) as pool:
        table_id, ada, hands = pool.submit(asyncio.run, play()).result()
    page = contexts.new().new_page()
    _as(page, ada)
    page.goto(f"/t/{table_id}")
    summary = page.locator(f".result-board .match-review[data-hands='{hands}']")
    expect(summary).to_be_visible(timeout=90_000)
    expect(summary.locator(".review-summary tbody tr")).to_have_count(2)
