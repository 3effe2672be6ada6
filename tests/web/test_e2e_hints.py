"""Hints in the web client: chosen on the start page, shown to the table, asked on your turn."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import Contexts


def test_a_table_with_hints_on_says_so_and_answers_the_seat_to_move(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    page.goto("/")
    page.fill("input[name=name]", "Dani")
    page.check("input[name=hints]")
    page.click("button.bot:has-text('TITO')")
    page.wait_for_selector(".game")
    expect(page.locator(".scoreboard .hints-on")).to_be_visible()
    page.locator(".hint-ask").click()
    expect(page.locator(".hint-says")).to_contain_text("LUNA jogaria:")


def test_a_table_without_hints_offers_none(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    page.goto("/")
    page.fill("input[name=name]", "Edu")
    page.click("button.bot:has-text('TITO')")
    page.wait_for_selector(".game.my-turn, .game")
    expect(page.locator(".scoreboard .hints-on")).to_have_count(0)
    expect(page.locator(".hint-ask")).to_have_count(0)
