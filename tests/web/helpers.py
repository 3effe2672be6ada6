"""What a person does in the web client, through the page alone (clicks, keys, taps)."""

from __future__ import annotations

import time

from playwright.sync_api import Page

# Something the player may do now: an action button, a card to discard, the result board's.
ACTIONABLE = ".actions button, .hand-card[aria-pressed], .result-actions button.primary"


def start_bot_match(
    page: Page,
    name: str,
    bot: str = "TITO",
    target: int | None = None,
    time: str | None = None,
    *,
    preset: str | None = None,
) -> str:
    """From the start page: name, options (a time control of clock.tsx's, a variant), play the
    bot; returns the table's id."""
    page.goto("/")
    page.fill("input[name=name]", name)
    if preset is not None:
        page.select_option("select[name=preset]", preset)
    if target is not None:
        page.fill("input[name=target]", str(target))
    if time is not None:
        page.select_option("select[name=time]", time)
    page.click(f"button.bot:has-text('{bot}')")
    page.wait_for_selector(".game")
    return page.url.rsplit("/", 1)[-1]


def version(page: Page) -> str | None:
    return page.get_attribute(".game", "data-version")


def wait_changed(page: Page, before: str | None) -> None:
    """Wait until the table shown is a newer version than ``before``."""
    page.wait_for_function(
        "v => { const g = document.querySelector('.game'); return g && g.dataset.version !== v; }",
        arg=before,
    )


def hand_cards(page: Page) -> list[str]:
    cards = page.eval_on_selector_all(".hand .hand-card", "e => e.map(x => x.dataset.card)")
    return [str(c) for c in cards]


def choose_discard(page: Page) -> str:
    """The card a simple player throws: the highest loose card that may be discarded."""
    loose = page.eval_on_selector_all(
        ".hand .hand-card.loose:not(.sunk)", "e => e.map(x => x.dataset.card)"
    )
    if loose:
        return str(loose[-1])
    movable = page.eval_on_selector_all(
        ".hand .hand-card:not(.sunk)", "e => e.map(x => x.dataset.card)"
    )
    return str(movable[-1])


def click_turn(page: Page, tap: bool = False) -> str:
    """Make one move by clicking (or tapping); returns what was done, or "" when none can be.

    Ends hands quickly: gin or knock whenever offered; passes the upcard; draws from the stock.
    """
    press = page.tap if tap else page.click
    if page.locator(".match-over").count():
        return ""
    before = version(page)
    for action in ("biggin", "gin", "knock", "pass"):
        if page.locator(f".actions [data-action={action}]").count():
            press(f".actions [data-action={action}]")
            wait_changed(page, before)
            return action
    if page.locator(".stock .pile-button").count():
        press(".stock .pile-button")
        wait_changed(page, before)
        return "draw"
    if page.locator(".hand-card[aria-pressed]").count():
        card = choose_discard(page)
        if not page.locator(f".hand-card[data-card='{card}'].selected").count():
            press(f".hand-card[data-card='{card}']")  # the first tap picks it up
            page.wait_for_selector(f".hand-card[data-card='{card}'].selected")
        press(f".hand-card[data-card='{card}']")
        wait_changed(page, before)
        return "discard"
    if page.locator(".result-actions button.primary").count():
        press(".result-actions button.primary")
        wait_changed(page, before)
        return "next_hand"
    return ""


def wait_actionable(page: Page, timeout: float = 20.0) -> None:
    page.wait_for_selector(f"{ACTIONABLE}, .match-over", timeout=timeout * 1000)


def play_until(page: Page, done: str, tap: bool = False, limit: int = 400) -> int:
    """Click through a match against a bot until ``done`` ("hand" over or "match" over)."""
    moves = 0
    deadline = time.monotonic() + 180
    while moves < limit and time.monotonic() < deadline:
        if done == "hand" and page.get_attribute(".game", "data-phase") == "over":
            return moves
        wait_actionable(page)
        if page.locator(".match-over").count():
            return moves
        if done == "hand" and page.get_attribute(".game", "data-phase") == "over":
            return moves
        if click_turn(page, tap=tap):
            moves += 1
    raise AssertionError(f"not done after {moves} moves")
