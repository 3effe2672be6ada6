"""Two strangers meet in the lobby: one posts a seek, the other sees it listed live; both pick
the same quick pairing and each page opens the one started table by itself."""

from __future__ import annotations

import os

from playwright.sync_api import Page, expect

from tests.web.conftest import Contexts
from tests.web.test_e2e_reach import violations

SHOTS = os.environ.get("LOBBY_SHOTS")


def enter(page: Page, name: str) -> None:
    page.goto("/")
    page.click("a.button.primary:has-text('ENCONTRAR ADVERSÁRIO')")
    page.wait_for_url("**/lobby")
    page.fill("input[name=name]", name)


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/{name}.png", full_page=True)


def test_two_strangers_pair_from_the_lobby(contexts: Contexts) -> None:
    ada = contexts.new().new_page()
    bo = contexts.new().new_page()
    enter(ada, "Ada Lobby")
    enter(bo, "Bo Lobby")
    shot(bo, "lobby-desktop-pt")
    # Ada posts a correspondence seek no one else matches: Bo's list shows it at once.
    ada.select_option("select[name=seek_pace]", "d3")
    ada.click("form >> button:has-text('PROCURAR')")
    expect(ada.locator(".seek-waiting")).to_contain_text("Esperando um adversário")
    expect(bo.locator("table.seeks")).to_contain_text("Ada Lobby")
    shot(ada, "lobby-waiting-pt")
    shot(bo, "lobby-list-pt")
    ada.click(".seek-waiting button.danger")
    expect(bo.locator("table.seeks")).to_have_count(0)
    # The same quick pairing from both: one table, both pages at it.
    ada.click("button.pace:has-text('5 min + 5 s')")
    expect(ada.locator(".seek-waiting")).to_be_visible()
    bo.click("button.pace:has-text('5 min + 5 s')")
    ada.wait_for_selector(".game")
    bo.wait_for_selector(".game")
    assert ada.url.rsplit("/", 1)[-1] == bo.url.rsplit("/", 1)[-1]
    assert "/t/" in ada.url


def test_the_lobby_on_a_phone_in_english(contexts: Contexts) -> None:
    page = contexts.new(locale="en-US", viewport={"width": 390, "height": 844}).new_page()
    page.goto("/lobby")
    expect(page.locator("h1")).to_have_text("Lobby")
    page.fill("input[name=name]", "Cleo")
    page.keyboard.press("Tab")
    page.focus("button.pace >> nth=0")
    page.keyboard.press("Enter")
    expect(page.locator(".seek-waiting")).to_contain_text("Waiting for an opponent")
    shot(page, "lobby-phone-en")
    page.click(".seek-waiting button.danger")
    expect(page.locator(".quick")).to_be_visible()


def test_an_open_challenge_by_link(contexts: Contexts) -> None:
    ada = contexts.new().new_page()
    enter(ada, "Ada Link")
    ada.click("form >> button:has-text('DESAFIAR')")
    link = ada.locator(".sent input.link-box")
    expect(link).to_be_visible()
    url = link.input_value()
    assert "?challenge=" in url
    bo = contexts.new(viewport={"width": 390, "height": 844}).new_page()
    bo.goto(url)
    expect(bo.locator(".challenge-in")).to_contain_text("Ada Link desafia você")
    bo.fill("input[name=name]", "Bo Link")
    shot(bo, "lobby-challenge-phone-pt")
    bo.click(".challenge-in button.primary")
    bo.wait_for_selector(".game")
    ada.wait_for_selector(".game")
    assert ada.url.rsplit("/", 1)[-1] == bo.url.rsplit("/", 1)[-1]


def test_no_serious_accessibility_violations_in_the_lobby(contexts: Contexts) -> None:
    ada = contexts.new().new_page()
    bo = contexts.new().new_page()
    enter(ada, "Ada Axe")
    ada.select_option("select[name=seek_pace]", "d3")
    ada.click("form >> button:has-text('PROCURAR')")
    enter(bo, "Bo Axe")
    expect(bo.locator("table.seeks")).to_contain_text("Ada Axe")
    assert violations(bo) == []  # the list, the grid, the forms
    assert violations(ada) == []  # waiting, with its cancel
    assert bo.evaluate("document.documentElement.scrollWidth") <= 1280
    phone = contexts.new(viewport={"width": 390, "height": 844}).new_page()
    phone.goto("/lobby")
    expect(phone.locator("table.seeks")).to_contain_text("Ada Axe")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    ada.click(".seek-waiting button.danger")
