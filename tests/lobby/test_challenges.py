"""Challenges over a real server: to a named player (accepted, declined with a reason), open
to whoever takes the link first, withdrawn, expired, rate limited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.api.conftest import Server, start_server
from tests.api.helpers import get_table, new_player
from tests.lobby.helpers import CORRESPONDENCE, LIVE, message, post_seek, seek, socket
from tests.waiting import until


@pytest.fixture(scope="module")
def lobby_server(module_db: str) -> Iterator[Server]:
    running = start_server(module_db, rate_limit_challenges="6/minute", lobby_max_open_seeks=50)
    yield running
    running.stop()


@pytest.fixture
async def http(lobby_server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=lobby_server.url, timeout=30) as client:
        yield client


async def test_a_named_player_is_told_and_accepts(
    http: httpx.AsyncClient, lobby_server: Server
) -> None:
    ada = await new_player(http, "Ada Challenger")
    bo = await new_player(http, "Bo Challenged")
    async with socket(lobby_server.url, bo) as bo_ws, socket(lobby_server.url, ada) as ada_ws:
        r = await http.post(
            "/v1/challenges", json={"to": "bo challenged", **CORRESPONDENCE}, headers=ada.auth
        )
        assert r.status_code == 201, r.text
        sent = r.json()
        assert sent["target"] == {"id": bo.id, "name": "Bo Challenged"} and sent["url"]
        told = await message(bo_ws, "challenge_received")
        assert told["seek_id"] == sent["seek_id"]
        stranger = await new_player(http)
        r = await http.post(f"/v1/challenges/{sent['seek_id']}/accept", headers=stranger.auth)
        assert r.status_code == 403 and r.json()["code"] == "not_challenged"
        r = await http.post(f"/v1/challenges/{sent['seek_id']}/accept", headers=bo.auth)
        assert r.status_code == 200, r.text
        paired = await message(ada_ws, "seek_paired")
    shown = await seek(http, sent["seek_id"], "challenges")
    assert shown["status"] == "paired" and shown["table_id"] == paired["table_id"]
    view = await get_table(http, paired["table_id"], bo)
    assert view["status"] == "playing"
    # A challenge is not a seek: each route finds only its own kind.
    assert (await http.get(f"/v1/seeks/{sent['seek_id']}")).status_code == 404


async def test_a_decline_carries_its_reason(http: httpx.AsyncClient, lobby_server: Server) -> None:
    ada, bo = await new_player(http), await new_player(http)
    r = await http.post("/v1/challenges", json={"to": bo.id}, headers=ada.auth)
    challenge_id = r.json()["seek_id"]
    async with socket(lobby_server.url, ada) as ws:
        url = f"/v1/challenges/{challenge_id}/decline"
        r = await http.post(url, json={"reason": "nope"}, headers=bo.auth)
        assert r.status_code == 422
        r = await http.post(url, json={"reason": "too_fast"}, headers=bo.auth)
        assert r.status_code == 200 and r.json()["status"] == "declined"
        closed = await message(ws, "seek_closed")
    assert closed == {
        "type": "seek_closed",
        "seek_id": challenge_id,
        "status": "declined",
        "reason": "too_fast",
    }
    r = await http.post(f"/v1/challenges/{challenge_id}/accept", headers=bo.auth)
    assert r.status_code == 409 and r.json()["code"] == "seek_closed"


async def test_an_open_challenge_goes_to_the_first_taker(http: httpx.AsyncClient) -> None:
    ada = await new_player(http)
    r = await http.post("/v1/challenges", json={"preset": "classic"}, headers=ada.auth)
    challenge_id = r.json()["seek_id"]
    takers = [await new_player(http) for _ in range(5)]
    answers = await asyncio.gather(
        *(http.post(f"/v1/challenges/{challenge_id}/accept", headers=t.auth) for t in takers)
    )
    assert sorted(r.status_code for r in answers) == [200, 409, 409, 409, 409]
    listed = {s["seek_id"] for s in (await http.get("/v1/seeks")).json()}
    assert challenge_id not in listed  # a challenge is never listed in the lobby


async def test_withdrawn_expired_and_refused_challenges(http: httpx.AsyncClient) -> None:
    ada, bo = await new_player(http), await new_player(http)
    r = await http.post("/v1/challenges", json={"to": ada.id}, headers=ada.auth)
    assert r.status_code == 422 and r.json()["code"] == "challenge_yourself"
    r = await http.post("/v1/challenges", json={"to": "nobody-has-this"}, headers=ada.auth)
    assert r.status_code == 404 and r.json()["code"] == "player_not_found"
    r = await http.post("/v1/challenges", json={"to": bo.id}, headers=ada.auth)
    withdrawn = r.json()["seek_id"]
    r = await http.delete(f"/v1/challenges/{withdrawn}", headers=bo.auth)
    assert r.status_code == 403
    r = await http.delete(f"/v1/challenges/{withdrawn}", headers=ada.auth)
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    r = await http.post("/v1/challenges", json={"to": bo.id, "expires_in": 1}, headers=ada.auth)
    short = r.json()["seek_id"]

    async def expired() -> bool:
        return bool((await seek(http, short, "challenges"))["status"] == "expired")

    await until(expired, what="the challenge to expire")
    codes = []
    for _ in range(6):
        r = await http.post("/v1/challenges", json={"to": bo.id}, headers=ada.auth)
        codes.append(r.status_code)
    assert codes[-1] == 429  # 6 a minute, and 3 were sent above


async def test_who_declined_is_not_paired_with_the_challenger_at_once(
    http: httpx.AsyncClient, lobby_server: Server
) -> None:
    ada, bo = await new_player(http), await new_player(http)
    r = await http.post("/v1/challenges", json={"to": bo.id}, headers=ada.auth)
    url = f"/v1/challenges/{r.json()['seek_id']}/decline"
    assert (await http.post(url, json={"reason": "later"}, headers=bo.auth)).status_code == 200
    # The same live seek from both, in a pool of their own (target 77): the pool's scans run
    # (Ada's bot offer comes from one, 5 s on) and never pair the two.
    game = {**LIVE, "rules": {"target": 77}}
    async with socket(lobby_server.url, ada) as ada_ws, socket(lobby_server.url, bo):
        first = await post_seek(http, ada, **game, bot_after=5)
        second = await post_seek(http, bo, **game)
        await message(ada_ws, "bot_offered")
        for posted in (first, second):
            assert (await seek(http, posted["seek_id"]))["status"] == "open"
