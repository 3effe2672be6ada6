"""Screenshots of the web client for the docs (``docs/screenshots/``), in Debian's Chromium.

    python -m scripts.web_screenshots

Starts a server on a temp SQLite file (bots without pauses), plays against TITO by clicks, and
saves the start page, a hand in play, the result board and the phone layout (390x844); then,
as the server has a VAPID key, "Notify me when it's my turn" in the phone's table menu
(``push-menu.png``) and on a returning player's start page (``push.png``, ``push-phone.png``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from app.service.delivery.webpush import new_private_key
from tests.api.conftest import start_server
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.web.helpers import click_turn, play_until, start_bot_match, wait_actionable

OUT = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


def discard_phase(page: Page) -> None:
    """Play on until it is this player's turn to discard, with a card picked."""
    for _ in range(60):
        wait_actionable(page)
        if page.locator(".hand-card[aria-pressed]").count() and page.locator(".known").count():
            break
        if page.locator(".hand-card[aria-pressed]").count() and _ > 8:
            break
        click_turn(page)
    loose = page.locator(".hand .hand-card.loose:not(.sunk)")
    (loose.last if loose.count() else page.locator(".hand .hand-card").last).click()


def push_shots(desk: Page, mobile: Page) -> None:
    """The push control where a returning player sees it: the table menu (the phone, mid-hand)
    and the start page (both sizes)."""
    for page in (desk, mobile):
        # Headless Chromium answers "denied" until told otherwise; a person would be asked.
        page.context.grant_permissions(["notifications"])
    mobile.click(".menu-button")
    mobile.wait_for_selector(".menu button.push-on")
    mobile.screenshot(path=OUT / "push-menu.png")
    for page, name in ((desk, "push.png"), (mobile, "push-phone.png")):
        page.goto("/")
        page.wait_for_selector("button.push-on")
        page.wait_for_selector(".tables li")
        page.locator(".push").scroll_into_view_if_needed()
        page.screenshot(path=OUT / name)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(
            f"sqlite+aiosqlite:///{tmp}/shots.db",
            vapid_private_key=new_private_key(),
            vapid_subject="mailto:ops@example.com",
        )
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                desk = browser.new_context(
                    base_url=server.url, viewport={"width": 1280, "height": 800}, locale="pt-BR"
                )
                page = desk.new_page()
                page.goto("/")
                page.fill("input[name=name]", "Ada")
                page.screenshot(path=OUT / "start.png")
                start_bot_match(page, "Ada", "TITO", target=60, time="day")
                discard_phase(page)
                page.mouse.move(0, 0)
                page.screenshot(path=OUT / "hand.png")
                play_until(page, "hand")
                page.wait_for_selector(".result-board [data-outcome]")
                page.screenshot(path=OUT / "result.png")

                phone = browser.new_context(
                    base_url=server.url,
                    viewport={"width": 390, "height": 844},
                    has_touch=True,
                    is_mobile=True,
                    device_scale_factor=2,
                    locale="pt-BR",
                )
                mobile = phone.new_page()
                start_bot_match(mobile, "Bia", "CARMEN", target=60, time="live")
                discard_phase(mobile)
                mobile.screenshot(path=OUT / "phone.png")
                push_shots(page, mobile)
                browser.close()
        finally:
            server.stop()
    for shot in sorted(OUT.glob("*.png")):
        print(shot)


if __name__ == "__main__":
    main()
