"""A person plays a whole match against TITO with clicks only, then a rematch; reload."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import Contexts
from tests.web.helpers import click_turn, hand_cards, play_until, start_bot_match, wait_actionable

SCORES = ".scoreboard [data-score]"


def test_a_whole_match_against_tito_by_clicks_then_a_rematch(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    start_bot_match(page, "Ada", "TITO", target=1)
    moves = play_until(page, "match")
    assert moves > 3
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
