"""Refusals in the page's language, and the moves while the connection is down."""

from __future__ import annotations

import re
from urllib.parse import urlparse

from playwright.sync_api import Route, WebSocketRoute, expect

from tests.web.conftest import Contexts
from tests.web.helpers import start_bot_match, wait_actionable


def test_a_refusal_reaches_the_page_in_its_language(contexts: Contexts) -> None:
    for locale, words in (
        ("pt-BR", "Regras fora dos limites"),
        ("en-US", "Rules out of range"),
    ):
        page = contexts.new(locale=locale).new_page()
        page.goto("/")
        page.fill("input[name=name]", "Ada")
        page.fill("input[name=knock_limit]", "11")  # the server refuses: invalid_ruleset
        page.click("button.bot:has-text('TITO')")
        error = page.locator(".start-main .error")
        expect(error).to_contain_text(words)
        assert "knock_limit" not in error.inner_text()


def test_the_empty_name_says_what_to_do_and_no_answer_is_said_in_words(
    contexts: Contexts,
) -> None:
    page = contexts.new().new_page()
    page.goto("/")
    page.click("button.bot:has-text('TITO')")
    expect(page.locator("#name-needed")).to_contain_text("Escreva o seu nome para jogar")
    page.route("**/v1/players", lambda route: route.abort())
    page.fill("input[name=name]", "Ada")
    page.click("button.bot:has-text('TITO')")
    expect(page.locator(".start-main .error")).to_contain_text("Sem conexão com o servidor")
    assert "Failed to fetch" not in page.inner_text("body")


def test_offline_the_moves_are_disabled_and_say_why(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    routes: list[WebSocketRoute] = []
    down = [False]

    def route(ws: WebSocketRoute) -> None:
        if down[0]:
            ws.close(code=4000, reason="down")
            return
        ws.connect_to_server()
        routes.append(ws)

    page.route_web_socket(re.compile(r".*/v1/tables/[0-9a-f]+/ws.*"), route)
    start_bot_match(page, "Rede", "TITO")
    wait_actionable(page)
    buttons = page.locator(".game button")
    assert buttons.count() > 0

    def refuse(route: Route) -> None:
        route.abort()

    down[0] = True
    page.route("**/v1/**", refuse)
    routes[-1].close(code=4000, reason="dropped")
    expect(page.locator(".offline-why")).to_contain_text("as jogadas ficam paradas")
    for i in range(buttons.count()):
        expect(buttons.nth(i)).to_be_disabled()
    page.keyboard.press("Enter")  # a key meets no fetch error either
    assert "TypeError" not in page.inner_text("body")

    down[0] = False
    page.unroute("**/v1/**", refuse)
    expect(page.locator(".offline-why")).to_have_count(0, timeout=20_000)
    expect(page.locator(".game button").first).to_be_enabled()


def test_an_unknown_table_keeps_the_header_and_a_way_home(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    page.goto(f"/t/{'0' * 32}")
    page.click("button:has-text('Assistir sem dar nome')")  # no name needed to look
    expect(page.locator(".not-found h2")).to_have_text("Mesa não encontrada.")
    expect(page.locator(".topbar")).to_contain_text("Gin Rummy")
    page.click(".not-found button:has-text('Início')")
    expect(page.locator("input[name=name]")).to_be_visible()
    assert urlparse(page.url).path == "/"


def test_a_server_without_push_logs_no_console_error_on_load(contexts: Contexts) -> None:
    page = contexts.new().new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    start_bot_match(page, "Ada", "TITO")
    with page.expect_response("**/v1/push/key") as asked:
        page.goto("/")  # a returning player: the start page asks whether the server pushes
    assert asked.value.status == 200 and asked.value.json()["enabled"] is False
    expect(page.locator(".tables li")).to_have_count(1)
    assert not errors, errors
