"""A clocked table in the browser: the time control chosen on the start page, each seat's time
counted down from the server's times, and the waiting player claiming the match by a click."""

from __future__ import annotations

import json
import re

import httpx
from playwright.sync_api import Page, expect

from tests.api.conftest import Server
from tests.api.helpers import Player, choose
from tests.waiting import wait_for
from tests.web.conftest import Contexts


def new_player(client: httpx.Client, name: str) -> Player:
    r = client.post("/v1/players", json={"name": name})
    assert r.status_code == 201, r.text
    return Player(r.json()["id"], name, r.json()["token"])


def post(client: httpx.Client, path: str, who: Player, body: object = None) -> dict[str, object]:
    r = client.post(path, json=body, headers=who.auth)
    assert r.status_code in (200, 201), r.text
    out: dict[str, object] = r.json()
    return out


def sign_in(page: Page, player: Player) -> None:
    """This browser is ``player`` (the client keeps its player in localStorage)."""
    page.goto("/")
    me = {"id": player.id, "name": player.name, "token": player.token}
    page.evaluate("m => localStorage.setItem('ginrummy.player', m)", json.dumps(me))


def seconds_shown(text: str) -> int:
    """A clock's text, "0:57" -> 57."""
    found = re.search(r"(\d+):(\d\d)", text)
    assert found, text
    return int(found[1]) * 60 + int(found[2])


def test_a_clock_chosen_on_the_start_page_counts_down_for_the_seat_to_move(
    contexts: Contexts, web_server: Server
) -> None:
    ada = contexts.new().new_page()
    ada.goto("/")
    ada.fill("input[name=name]", "Ada")
    ada.select_option("select[name=time]", "live")
    ada.click("button:has-text('CRIAR CONVITE')")
    ada.wait_for_selector(".waiting")
    table_id = ada.url.rsplit("/", 1)[-1]
    token = json.loads(str(ada.evaluate("localStorage.getItem('ginrummy.player')")))["token"]

    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        ada_token = {"Authorization": f"Bearer {token}"}
        table = client.get(f"/v1/tables/{table_id}", headers=ada_token).json()
        bo = new_player(client, "Bo")
        post(client, f"/v1/invites/{table['invite_code']}", bo)
    clock = table["clock"]
    assert clock["control"] == "per_move" and clock["seconds"] == 60
    ada.click("button:has-text('COMEÇAR A PARTIDA')")
    running = ada.locator(".clock.running")
    expect(running).to_have_count(1)
    expect(ada.locator(".clock")).to_have_count(2)
    first = seconds_shown(running.inner_text())
    assert 50 <= first <= 60
    # Counts down between views.
    wait_for(lambda: seconds_shown(running.inner_text()) < first, what="the clock counting down")
    waiting = ada.locator(".clock:not(.running)")
    assert seconds_shown(waiting.inner_text()) == 60  # the other seat's full allowance


def test_the_waiting_player_claims_the_match_when_the_opponents_time_ran_out(
    contexts: Contexts, web_server: Server
) -> None:
    clock = {"control": "per_move", "seconds": 3, "policy": "claim"}

    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        players = [new_player(client, "Ada"), new_player(client, "Bo")]
        created = post(client, "/v1/tables", players[0], {"clock": clock})
        table_id = str(created["table_id"])
        post(client, f"/v1/invites/{created['invite_code']}", players[1])
        post(client, f"/v1/tables/{table_id}/start", players[0])
        # Each seat makes its first move (a seat that never moved has the match aborted).
        moved: set[int] = set()
        while True:
            turn = int(client.get(f"/v1/tables/{table_id}").json()["game"]["hand"]["turn"])
            if moved == {0, 1}:
                break
            view = client.get(f"/v1/tables/{table_id}", headers=players[turn].auth).json()
            path, body = choose(view)
            post(client, f"/v1/tables/{table_id}/{path}", players[turn], body)
            moved.add(turn)
        late = turn
    waiting = players[1 - late]
    page = contexts.new().new_page()
    sign_in(page, waiting)
    page.goto(f"/t/{table_id}")
    page.wait_for_selector(".game")
    expect(page.locator(".clock-notice")).to_contain_text(
        f"O tempo de {players[late].name} acabou", timeout=30_000
    )
    page.click("button.claim")
    page.wait_for_selector(".match-over")

    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        match = client.get(f"/v1/tables/{table_id}", headers=waiting.auth).json()["game"]["match"]
    assert match["status"] == "finished" and match["winner"] == 1 - late


def test_a_match_aborted_before_a_first_move_says_so_and_names_no_winner(
    contexts: Contexts, web_server: Server
) -> None:
    """A person at a bot table who never moves: the match is aborted, not lost."""
    clock = {"control": "per_move", "seconds": 1, "policy": "forfeit"}
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        ada = new_player(client, "Ada")
        created = post(client, "/v1/tables", ada, {"clock": clock, "rated": True})
        table_id = str(created["table_id"])
        post(client, f"/v1/tables/{table_id}/bot", ada, {"level": "easy"})
        post(client, f"/v1/tables/{table_id}/start", ada)
    page = contexts.new().new_page()
    sign_in(page, ada)
    page.goto(f"/t/{table_id}")
    expect(page.locator(".match-over [data-aborted]")).to_contain_text(
        "Fim da partida: anulada", timeout=30_000
    )
    expect(page.locator(".match-over")).to_contain_text("Nada muda no rating")
    assert page.locator(".match-over [data-winner]").count() == 0
