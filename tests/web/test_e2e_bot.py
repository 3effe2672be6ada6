"""A person plays a whole match against TITO with clicks only, then a rematch; reload."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.web.conftest import Contexts
from tests.web.helpers import (
    choose_discard,
    click_turn,
    hand_cards,
    play_until,
    start_bot_match,
    version,
    wait_actionable,
    wait_changed,
)

SCORES = ".scoreboard [data-score]"


def test_a_whole_match_against_tito_by_clicks_then_a_rematch(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    start_bot_match(page, "Ada", "TITO", target=1)
    # A deal may be knocked at once (target 1): the match took clicks, how many is the deal's.
    assert play_until(page, "match") >= 1
    board = page.locator(".result-board")
    expect(board.locator(".match-over")).to_contain_text("venceu a partida")
    expect(board.locator("[data-outcome]")).to_be_visible()
    scores = page.eval_on_selector_all(SCORES, "e => e.map(x => +x.textContent)")
    assert max(scores) >= 1
    # The provably fair shuffle of the deciding hand checks out.
    board.locator("details.history summary").click()
    board.locator("details.history li button").last.click()
    expect(board.locator("[data-fair=valid]").last).to_be_visible()

    page.click(".result-actions button:has-text('REVANCHE')")
    expect(page.locator(".result-board")).to_have_count(0)
    expect(page.locator(".scoreboard")).to_contain_text("Mão 1")
    scores = page.eval_on_selector_all(SCORES, "e => e.map(x => +x.textContent)")
    assert scores == [0, 0]
    wait_actionable(page)
    assert click_turn(page)

    # The start page lists the table (whose turn) and the finished match, in either language.
    page.goto("/")
    expect(page.locator(".tables li").first).to_contain_text("TITO")
    expect(page.locator(".matches li").first).to_contain_text("TITO")
    page.click("button:has-text('English')")
    expect(page.locator("h2", has_text="Play the computer")).to_be_visible()
    page.click("button:has-text('Português')")
    expect(page.locator("h2", has_text="Jogar contra o robô")).to_be_visible()


def drag(page: Page, card: str) -> None:
    """Drag a card of the hand onto the discard pile with the mouse."""
    start = page.locator(f".hand-card[data-card='{card}']").bounding_box()
    pile = page.locator(".pile-discard").bounding_box()
    assert start and pile
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(pile["x"] + pile["width"] / 2, pile["y"] + pile["height"] / 2, steps=8)
    page.mouse.up()


def test_the_card_taken_from_the_pile_sinks_and_a_dragged_card_is_discarded(
    contexts: Contexts,
) -> None:
    page = contexts.new().new_page()
    start_bot_match(page, "Drag", "TITO")
    for _ in range(20):
        wait_actionable(page)
        if page.locator(".pile-discard .pile-button").count():
            break
        click_turn(page)
    before = version(page)
    page.click(".pile-discard .pile-button")
    wait_changed(page, before)
    taken = page.locator(".hand-card.sunk")
    expect(taken).to_have_count(1)
    assert taken.get_attribute("aria-disabled") == "true"
    sunk = str(taken.get_attribute("data-card"))
    # Clicking the sunk card twice does nothing: it cannot be discarded this turn.
    before = version(page)
    taken.click(force=True)  # aria-disabled: Playwright would wait for it to be enabled
    taken.click(force=True)
    page.wait_for_timeout(300)
    assert version(page) == before
    assert page.locator(".hand-card.selected").count() == 0
    assert sunk in hand_cards(page)

    card = choose_discard(page)
    assert card != sunk
    drag(page, card)
    wait_changed(page, before)
    assert card not in hand_cards(page)
    assert len(hand_cards(page)) == 10


def test_a_reload_mid_hand_restores_the_same_table(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    table_id = start_bot_match(page, "Bia", "CARMEN")
    for _ in range(4):
        wait_actionable(page)
        click_turn(page)
    wait_actionable(page)
    before = hand_cards(page)
    phase = page.get_attribute(".game", "data-phase")
    page.reload()
    page.wait_for_selector(".game")
    assert page.url.endswith(table_id)
    assert hand_cards(page) == before
    assert page.get_attribute(".game", "data-phase") == phase
    wait_actionable(page)
    assert click_turn(page)
