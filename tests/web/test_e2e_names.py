"""A long name fits a phone: cut with an ellipsis where it labels a seat, never a sideways
scroll."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import Contexts
from tests.web.helpers import start_bot_match

# 40 wide letters: the longest name the server accepts, and about the widest.
LONG = "W" * 40


def test_a_forty_letter_name_is_ellipsised_and_the_phone_never_scrolls_sideways(
    contexts: Contexts,
) -> None:
    page = contexts.new(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    start_bot_match(page, LONG, "TITO")
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 390, f"the page is {wide} px wide on a 390 px phone"
    label = page.locator(".scoreboard .who.name").first
    expect(label).to_have_attribute("title", LONG)
    # Cut: the label shows less than its text, which it holds whole.
    assert label.evaluate("e => e.scrollWidth > e.clientWidth"), "the name is not cut"
    assert label.text_content() == LONG
