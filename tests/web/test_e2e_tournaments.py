"""A person finds a tournament from the start page, joins it, and reaches their table from it
once the organiser starts it; the page shows the standings with their row and the pairings."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.api.conftest import Server
from tests.web.conftest import Contexts


def test_join_a_tournament_and_reach_the_table_from_its_page(
    contexts: Contexts, web_server: Server
) -> None:
    with httpx.Client(base_url=web_server.url, timeout=30) as http:
        org = http.post("/v1/players", json={"name": "Rita"}).json()
        auth = {"Authorization": f"Bearer {org['token']}"}
        body = {"format": "swiss", "name": "Suíço de teste", "rounds": 1, "admits": "both"}
        tid = http.post("/v1/tournaments", json=body, headers=auth).json()["tournament_id"]

        page = contexts.new().new_page()
        page.goto("/")
        page.click("a.tour-entry")
        page.click("button[role=tab]:has-text('Em breve')")
        page.click(f"a[href='/tournaments/{tid}']")
        expect(page.locator(".tour-head h2")).to_have_text("Suíço de teste")
        expect(page.locator(".tour-countdown")).to_contain_text("Começa em")
        page.fill(".tour-join input", "Ada")
        page.click("button:has-text('INSCREVER-SE')")
        expect(page.locator(".tour-standings tr.you")).to_contain_text("Ada (Você)")

        http.post(f"/v1/tournaments/{tid}/bots", json={"level": "easy"}, headers=auth)
        assert http.post(f"/v1/tournaments/{tid}/start", headers=auth).status_code == 200

        go = page.locator("button:has-text('IR PARA A SUA MESA')")
        expect(go).to_be_visible(timeout=15_000)
        expect(page.locator(".tour-pairings li.you")).to_contain_text("jogando")
        table = http.get(f"/v1/tournaments/{tid}").json()["rounds"][0]["pairings"][0]["table_id"]
        go.click()
        page.wait_for_url(f"**/t/{table}")
        expect(page.locator(".game")).to_be_visible()
