"""Seeks over a real server: paired into one started table, told on the sockets; racing
acceptors; caps; presence; bots offered; bot accounts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.api.conftest import Server, start_server
from tests.api.helpers import Player, get_table, new_player
from tests.lobby.helpers import CORRESPONDENCE, LIVE, message, post_seek, seek, socket
from tests.waiting import until


@pytest.fixture(scope="module")
def lobby_server(module_db: str) -> Iterator[Server]:
    """A server of the module's own: presence lapses in a second, two open seeks a player."""
    running = start_server(module_db, lobby_presence_seconds=1.0, lobby_max_open_seeks=2)
    yield running
    running.stop()


@pytest.fixture
async def http(lobby_server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=lobby_server.url, timeout=30) as client:
        yield client


async def test_two_same_seeks_are_paired_into_one_started_table(
    http: httpx.AsyncClient, lobby_server: Server
) -> None:
    ada, bo = await new_player(http, "Ada"), await new_player(http, "Bo")
    async with socket(lobby_server.url, ada) as ada_ws, socket(lobby_server.url, bo) as bo_ws:
        first = await post_seek(http, ada, **LIVE, deck_design="royal")
        assert first["status"] == "open" and first["game"]["speed"] == "live"
        second = await post_seek(http, bo, **LIVE, deck_design="neon")
        told = await asyncio.gather(message(ada_ws, "seek_paired"), message(bo_ws, "seek_paired"))
    table_id = told[0]["table_id"]
    assert told[1]["table_id"] == table_id
    assert {t["seek"]["seek_id"] for t in told} == {first["seek_id"], second["seek_id"]}
    for mine in (first, second):
        shown = await seek(http, mine["seek_id"])
        assert shown["status"] == "paired" and shown["table_id"] == table_id
    view = await get_table(http, table_id, ada)
    assert view["status"] == "playing"
    seated = {s["player"]["id"]: s["deck_design"] for s in view["seats"] if s["player"]}
    assert seated == {ada.id: "royal", bo.id: "neon"}  # each seeker's own design
    # Both are at a live table now: neither may seek another live game (cap 1).
    r = await http.post("/v1/seeks", json=LIVE, headers=ada.auth)
    assert r.status_code == 409 and r.json()["code"] == "too_many_live_games"


async def test_racing_acceptors_one_wins(http: httpx.AsyncClient) -> None:
    owner = await new_player(http, "Owner")
    posted = await post_seek(http, owner, **CORRESPONDENCE, rating_min=0, rating_max=1)
    takers = [await new_player(http, f"Taker{i}") for i in range(8)]

    async def accept(taker: Player) -> httpx.Response:
        return await http.post(f"/v1/seeks/{posted['seek_id']}/accept", headers=taker.auth)

    answers = await asyncio.gather(*(accept(t) for t in takers))
    won = [r for r in answers if r.status_code == 200]
    assert len(won) == 1, [r.text for r in answers]
    assert {r.json()["code"] for r in answers if r.status_code != 200} == {"seek_closed"}
    table_id = won[0].json()["table_id"]
    shown = await seek(http, posted["seek_id"])
    assert shown["table_id"] == table_id and shown["status"] == "paired"
    view = await get_table(http, table_id, owner)
    winner = takers[answers.index(won[0])]
    assert view["status"] == "playing"
    assert [s["player"]["id"] for s in view["seats"]] == [owner.id, winner.id]
    for taker in takers:
        r = await http.get("/v1/players/me/seeks", headers=taker.auth)
        assert r.json() == []


async def test_a_live_seek_lapses_when_its_owner_has_no_socket(http: httpx.AsyncClient) -> None:
    away = await new_player(http, "Away")
    posted = await post_seek(http, away, **LIVE)

    async def expired() -> bool:
        return bool((await seek(http, posted["seek_id"]))["status"] == "expired")

    await until(expired, what="the live seek of an absent owner to lapse")
    listed = (await http.get("/v1/seeks")).json()
    assert posted["seek_id"] not in {s["seek_id"] for s in listed}


async def test_open_seeks_are_capped_and_cancelled(http: httpx.AsyncClient) -> None:
    cara = await new_player(http, "Cara")
    one = await post_seek(http, cara, **CORRESPONDENCE, rating_min=4000)
    await post_seek(http, cara, preset="classic", rating_min=4000)
    r = await http.post("/v1/seeks", json={"preset": "standard"}, headers=cara.auth)
    assert r.status_code == 409 and r.json()["code"] == "too_many_seeks"
    other = await new_player(http, "Dan")
    r = await http.delete(f"/v1/seeks/{one['seek_id']}", headers=other.auth)
    assert r.status_code == 403 and r.json()["code"] == "not_yours"
    r = await http.delete(f"/v1/seeks/{one['seek_id']}", headers=cara.auth)
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    r = await http.delete(f"/v1/seeks/{one['seek_id']}", headers=cara.auth)
    assert r.status_code == 409 and r.json()["code"] == "seek_closed"
    await post_seek(http, cara, preset="standard", rating_min=4000)


async def test_bad_seeks_are_refused(http: httpx.AsyncClient) -> None:
    eve = await new_player(http, "Eve")
    cases = [
        ({"preset": "nope"}, 422, "unknown_preset"),
        ({"preset": "standard", "rating_min": 1600, "rating_max": 1500}, 422, "invalid_request"),
        ({**CORRESPONDENCE, "bot_after": 30}, 422, "bot_offer_live_only"),
        ({"preset": "standard", "rated": True, "rules": {"target": 50}}, 422, "rated_overrides"),
    ]
    for body, status, code in cases:
        r = await http.post("/v1/seeks", json=body, headers=eve.auth)
        assert (r.status_code, r.json()["code"]) == (status, code), r.text
    r = await http.get("/v1/seeks/nope")
    assert r.status_code == 404 and r.json()["code"] == "seek_not_found"
    assert (await http.post("/v1/seeks", json={})).status_code == 401


async def test_a_bot_is_offered_never_given(http: httpx.AsyncClient, lobby_server: Server) -> None:
    fay = await new_player(http, "Fay")
    async with socket(lobby_server.url, fay) as ws:
        posted = await post_seek(http, fay, **LIVE, rating_min=4000, bot_after=5)
        url = f"/v1/seeks/{posted['seek_id']}/bot"
        r = await http.post(url, json={"level": "easy"}, headers=fay.auth)
        assert r.status_code == 409 and r.json()["code"] == "no_bot_offer"
        offer = await message(ws, "bot_offered")
        assert offer["seek_id"] == posted["seek_id"]
        assert (await seek(http, posted["seek_id"]))["status"] == "open"  # offered, not given
        r = await http.post(url, json={"level": "easy"}, headers=fay.auth)
        assert r.status_code == 200, r.text
        paired = await message(ws, "seek_paired")
    view = await get_table(http, paired["table_id"], fay)
    assert view["status"] == "playing"
    assert view["seats"][1]["bot_level"] == "easy"


async def test_bot_accounts_are_marked_before_they_play(http: httpx.AsyncClient) -> None:
    r = await http.post("/v1/players", json={"name": "Robo", "bot": True})
    robo = Player(r.json()["id"], "Robo", r.json()["token"])
    posted = await post_seek(http, robo, **CORRESPONDENCE, rating_min=4000)
    assert posted["player"]["bot"] is True
    late = await new_player(http, "Late")
    assert (await http.post("/v1/players/me/bot", headers=late.auth)).status_code == 200
    other = await new_player(http, "Human")
    r = await http.post(f"/v1/seeks/{posted['seek_id']}/accept", headers=other.auth)
    assert r.status_code == 200
    r = await http.post("/v1/players/me/bot", headers=other.auth)
    assert r.status_code == 409 and r.json()["code"] == "already_played"


async def test_a_retried_seek_is_posted_once(http: httpx.AsyncClient) -> None:
    gus = await new_player(http, "Gus")
    headers = {**gus.auth, "Idempotency-Key": "seek-1"}
    body = {**CORRESPONDENCE, "rating_min": 4000}
    answers = [await http.post("/v1/seeks", json=body, headers=headers) for _ in range(2)]
    assert [r.status_code for r in answers] == [201, 201]
    assert answers[1].headers["Idempotency-Replayed"] == "true"
    assert answers[0].json()["seek_id"] == answers[1].json()["seek_id"]
    assert len((await http.get("/v1/players/me/seeks", headers=gus.auth)).json()) == 1
    r = await http.post("/v1/seeks", json={"preset": "classic"}, headers=headers)
    assert r.status_code == 409 and r.json()["code"] == "idempotency_key_reused"
