"""Screenshots of the web client for the docs (``docs/screenshots/``), in Debian's Chromium.

    python -m scripts.web_screenshots

Starts a server on a temp SQLite file (bots without pauses, a VAPID key for push) and, in both
languages (``pt``, ``en``: the browser's language) at both sizes (``desktop`` 1280x800,
``phone`` 390x844), saves ``<what>-<lang>-<size>.png`` of: the start page (``start``); a match
against TITO by clicks: the result board of its first hand (``result``), then a turn of the
second with the move log and the score sheet (``hand``); a stranger watching that table
(``spectator``); the invite page as the invitee sees it (``invite``); "Notify me when it's my
turn" in the table menu (``push-menu``) and on a returning player's start page (``push``);
the match resigned, the first hand's replay (``replay``) and the player's profile
(``profile``); the lobby (``lobby``); a Swiss of built-in bots made over the API
(``tournament``). The old files in ``docs/screenshots/`` are deleted first.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from app.service.delivery.webpush import new_private_key
from tests.api.conftest import start_server
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.web.helpers import click_turn, play_until, start_bot_match, wait_actionable

OUT = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
LANGS = {"pt": "pt-BR", "en": "en-US"}
SIZES: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
}


class Shots:
    """One language at one size: new contexts (each a separate person) and the file names."""

    def __init__(self, browser: Browser, url: str, lang: str, size: str) -> None:
        self.browser, self.url, self.lang, self.size = browser, url, lang, size
        self.opened: list[BrowserContext] = []

    def person(self) -> Page:
        context = self.browser.new_context(
            base_url=self.url, locale=LANGS[self.lang], device_scale_factor=1, **SIZES[self.size]
        )
        context.set_default_timeout(30_000)
        self.opened.append(context)
        return context.new_page()

    def take(self, page: Page, what: str) -> None:
        page.mouse.move(0, 0)
        page.wait_for_timeout(400)  # the cards' and the dialogs' transitions
        page.screenshot(path=OUT / f"{what}-{self.lang}-{self.size}.png")

    def close(self) -> None:
        for context in self.opened:
            context.close()


def discard_phase(page: Page) -> None:
    """Play on until it is this player's turn to discard, with a card picked."""
    for n in range(60):
        wait_actionable(page)
        if page.locator(".hand-card[aria-pressed]").count() and (
            page.locator(".known").count() or n > 8
        ):
            break
        click_turn(page)
    loose = page.locator(".hand .hand-card.loose:not(.sunk)")
    (loose.last if loose.count() else page.locator(".hand .hand-card").last).click()


def tournament(url: str) -> str:
    """A two-round Swiss of four built-in bots, started; its id."""
    with httpx.Client(base_url=url, timeout=30) as http:
        org = http.post("/v1/players", json={"name": "Rita"}).json()
        auth = {"Authorization": f"Bearer {org['token']}"}
        body = {"format": "swiss", "name": "Suíço de sexta", "rounds": 2, "admits": "bots"}
        body |= {"rules": {"target": 50}, "capacity": 4}
        made = http.post("/v1/tournaments", json=body, headers=auth)
        made.raise_for_status()
        tid = str(made.json()["tournament_id"])
        for level in ("easy", "easy", "medium", "medium"):
            http.post(f"/v1/tournaments/{tid}/bots", json={"level": level}, headers=auth)
        http.post(f"/v1/tournaments/{tid}/start", headers=auth).raise_for_status()
        return tid


def invite_link(url: str) -> str:
    """Bia's table waiting for the invitee: its link."""
    with httpx.Client(base_url=url, timeout=30) as http:
        bia = http.post("/v1/players", json={"name": "Bia"}).json()
        auth = {"Authorization": f"Bearer {bia['token']}"}
        table = http.post("/v1/tables", json={}, headers=auth).json()
        return f"/t/{table['table_id']}?invite={table['invite_code']}"


def take_all(shots: Shots, tid: str, link: str) -> None:
    page = shots.person()
    page.goto("/")
    page.fill("input[name=name]", "Ada")
    page.wait_for_selector("button.bot")
    shots.take(page, "start")

    table = start_bot_match(page, "Ada", "TITO", time="day")
    play_until(page, "hand")
    page.wait_for_selector(".result-board [data-outcome]")
    page.wait_for_selector(".result-board .review-summary tbody tr:nth-child(2)", timeout=90_000)
    heading = page.locator(".result-board [data-outcome]")
    heading.evaluate("e => e.scrollIntoView({ block: 'nearest' })")
    shots.take(page, "result")
    click_turn(page)  # the next hand
    discard_phase(page)
    # A phone's hand stays at the bottom of the screen: the score sheet shows whole above it.
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    shots.take(page, "hand")

    watcher = shots.person()
    watcher.goto(f"/t/{table}")
    watcher.click(".panel button.link")
    watcher.wait_for_selector(".watching-note")
    watcher.wait_for_selector(".game .seat-zone")
    shots.take(watcher, "spectator")

    invitee = shots.person()
    invitee.goto(link)
    invitee.wait_for_selector(".invite-prompt .inviter")
    shots.take(invitee, "invite")

    page.context.grant_permissions(["notifications"])  # headless Chromium denies by default
    page.click(".menu-button")
    page.wait_for_selector(".menu button.push-on")
    shots.take(page, "push-menu")

    page.goto("/")
    page.wait_for_selector("button.push-on")
    page.wait_for_selector(".tables li")
    page.locator(".push").scroll_into_view_if_needed()
    shots.take(page, "push")

    # The match given up, the profile counts it (and its hand) against TITO.
    me = json.loads(str(page.evaluate("localStorage.getItem('ginrummy.player')")))
    auth = {"Authorization": f"Bearer {me['token']}"}
    with httpx.Client(base_url=shots.url, timeout=30) as http:
        http.post(f"/v1/tables/{table}/resign", json={}, headers=auth).raise_for_status()

    page.goto(f"/t/{table}/replay/1/1")
    page.wait_for_selector(".review-summary tbody tr:nth-child(2)", timeout=90_000)
    page.keyboard.press("End")
    shots.take(page, "replay")

    page.goto(f"/p/{me['id']}")
    page.wait_for_selector(".profile-main .charts")
    shots.take(page, "profile")

    page.goto("/lobby")
    page.wait_for_load_state("networkidle")
    shots.take(page, "lobby")

    page.goto(f"/tournaments/{tid}")
    page.wait_for_selector(".tour-standings tr")
    page.wait_for_selector(".tour-pairings li")
    shots.take(page, "tournament")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.png"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(
            f"sqlite+aiosqlite:///{tmp}/shots.db",
            vapid_private_key=new_private_key(),
            vapid_subject="mailto:ops@example.com",
        )
        try:
            tid = tournament(server.url)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for lang in LANGS:
                    for size in SIZES:
                        shots = Shots(browser, server.url, lang, size)
                        try:
                            take_all(shots, tid, invite_link(server.url))
                        finally:
                            shots.close()
                browser.close()
        finally:
            server.stop()
    written = sorted(OUT.glob("*.png"))
    # Fewer colours, the same look: a quarter of the bytes (Debian's pngquant, where it is).
    if shutil.which("pngquant"):
        subprocess.run(
            ["pngquant", "--force", "--skip-if-larger", "--quality", "70-95", "--ext", ".png"]
            + [str(shot) for shot in written],
            check=False,
        )
    for shot in written:
        print(shot)


if __name__ == "__main__":
    main()
