"""Bot seats on a real server: a person against a bot, level changes, restart, two processes.
Bots move without pauses here."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from app.service.workers.bots import BotRunner
from tests.api.conftest import Server, pg_database, start_server
from tests.api.helpers import JSON, Player, choose, get_table, new_player, new_table

# Log entries that are a seat's move (one per pipeline command of that seat).
DRAWS = {"upcard_taken", "upcard_passed", "drew_stock", "drew_discard"}
ENDS = {"discarded", "knocked", "big_gin"}


@pytest.fixture
def fresh_url(database_url: str, tmp_path: Path) -> Iterator[str]:
    """A new, empty database of the same kind: no other server's bot runner looks at it."""
    if database_url.startswith("sqlite"):
        yield f"sqlite+aiosqlite:///{tmp_path / 'bots.db'}"
        return
    with pg_database("ginrummy_bots") as url:
        yield url


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


def _runner(server: Server) -> BotRunner:
    app = server.uvicorn.config.app
    assert isinstance(app, FastAPI)
    runner: BotRunner = app.state.bots
    return runner


async def bot_table(
    client: httpx.AsyncClient, level: str = "easy", target: int = 30
) -> tuple[str, Player]:
    """A new table, to ``target`` points, whose creator seated a bot of ``level`` and started
    the match."""
    human = await new_player(client, "Ada")
    table = await new_table(client, human, preset="standard", rules={"target": target})
    tid = table["table_id"]
    r = await client.post(f"/v1/tables/{tid}/bot", json={"level": level}, headers=human.auth)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tables/{tid}/start", headers=human.auth)
    assert r.status_code == 200, r.text
    return tid, human


async def my_turn(client: httpx.AsyncClient, tid: str, human: Player, limit: float = 15) -> JSON:
    """Wait until the person has a move (the bot moves by itself), or the match is over."""
    deadline = time.monotonic() + limit
    while True:
        view = await get_table(client, tid, human)
        game = view["game"]
        if game["match"]["status"] == "finished" or set(game["legal"]["actions"]) - {"resign"}:
            return view
        assert time.monotonic() < deadline, f"the bot did not move: {game['hand']}"
        await asyncio.sleep(0.01)


async def play_person(
    clients: list[httpx.AsyncClient], tid: str, human: Player, hands: int = 1000
) -> JSON:
    """The person plays (through each client in turn) until the match or ``hands`` hands end."""
    moves = 0
    while True:
        view = await my_turn(clients[0], tid, human)
        game = view["game"]
        if game["match"]["status"] == "finished":
            return view
        if game["hand"]["phase"] == "over" and game["hand"]["number"] >= hands:
            return view
        path, body = choose(view)
        client = clients[moves % len(clients)]
        r = await client.post(f"/v1/tables/{tid}/{path}", json=body, headers=human.auth)
        assert r.status_code == 200, r.text
        moves += 1


async def play_one_hand_then_resign(
    client: httpx.AsyncClient,
    tid: str,
    human: Player,
    clients: list[httpx.AsyncClient] | None = None,
    hands: int = 1,
) -> JSON:
    """Play ``hands`` hands, then resign unless a hand already ended the match."""
    view = await play_person(clients or [client], tid, human, hands=hands)
    if view["game"]["match"]["status"] != "finished":
        r = await client.post(f"/v1/tables/{tid}/resign", headers=human.auth)
        if r.status_code == 409 and r.json()["code"] == "match_over":
            # The bot's own knock ended the match between our look and the resignation.
            return await get_table(client, tid, human)
        assert r.status_code == 200, r.text
        view = r.json()["table"]
    return view


async def log(client: httpx.AsyncClient, tid: str) -> list[JSON]:
    events: list[JSON] = []
    while batch := (await client.get(f"/v1/tables/{tid}/events?since={len(events)}")).json():
        events += batch
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    return events


def bot_moves(events: list[JSON], seat: int = 1) -> list[str]:
    """The bot seat's moves, checked to alternate: one draw, then one discard, knock or gin."""
    moves = [e["type"] for e in events if e.get("seat") == seat and e["type"] in DRAWS | ENDS]
    turns = [m for m in moves if m != "upcard_passed"]
    for first, second in zip(turns[::2], turns[1::2], strict=False):
        assert first in DRAWS and second in ENDS, moves
    return moves


async def test_a_person_plays_a_match_against_a_bot(client: httpx.AsyncClient) -> None:
    tid, human = await bot_table(client, "medium")
    view = await get_table(client, tid, human)
    assert view["seats"][1] == {
        "seat": 1,
        "player": None,
        "bot_level": "medium",
        "bot_name": "CARMEN",
        "deck_design": "classic",
    }
    assert view["invite_code"] is None
    view = await play_person([client], tid, human)
    match = view["game"]["match"]
    assert match["status"] == "finished" and match["winner"] in (0, 1)
    assert bot_moves(await log(client, tid))
    # The person's history names the bot they played.
    history = (await client.get("/v1/players/me/matches", headers=human.auth)).json()
    assert [(h["table_id"], h["opponent"], h["opponent_bot"], h["result"]) for h in history] == [
        (
            tid,
            None,
            {"level": "medium", "name": "CARMEN"},
            "win" if match["winner"] == 0 else "loss",
        )
    ]


async def test_the_bot_level_changes_only_between_matches(client: httpx.AsyncClient) -> None:
    tid, human = await bot_table(client, "easy")
    stranger = await new_player(client)
    r = await client.post(f"/v1/tables/{tid}/bot", json={"level": "hard"}, headers=stranger.auth)
    assert r.status_code == 403 and r.json()["code"] == "not_creator"
    r = await client.post(f"/v1/tables/{tid}/bot", json={"level": "hard"}, headers=human.auth)
    assert r.status_code == 409 and r.json()["code"] == "match_in_progress"
    r = await client.delete(f"/v1/tables/{tid}/bot", headers=human.auth)
    assert r.status_code == 409 and r.json()["code"] == "match_in_progress"
    r = await client.post(f"/v1/tables/{tid}/bot", json={"level": "nope"}, headers=human.auth)
    assert r.status_code == 422
    await play_one_hand_then_resign(client, tid, human)

    r = await client.post(f"/v1/tables/{tid}/bot", json={"level": "hard"}, headers=human.auth)
    assert r.status_code == 200, r.text
    assert r.json()["table"]["seats"][1]["bot_name"] == "LUNA"
    # A rematch needs nothing from the bot: it plays the new match at its new level.
    r = await client.post(f"/v1/tables/{tid}/rematch", headers=human.auth)
    assert r.status_code == 200, r.text
    view = await play_one_hand_then_resign(client, tid, human)
    assert view["match_number"] == 2
    events = await log(client, tid)
    seated = [e["bot"] for e in events if e["type"] == "bot_seated"]
    assert seated == [{"level": "easy", "name": "TITO"}, {"level": "hard", "name": "LUNA"}]

    r = await client.delete(f"/v1/tables/{tid}/bot", headers=human.auth)
    assert r.status_code == 200, r.text
    table = r.json()["table"]
    assert table["seats"][1]["player"] is None and table["seats"][1]["bot_level"] is None
    assert table["status"] == "waiting" and table["invite_code"]


async def _next_version(client: httpx.AsyncClient, tid: str, human: Player, after: int) -> JSON:
    while (view := await get_table(client, tid, human))["version"] == after:
        await asyncio.sleep(0.01)
    return view


async def _person_moves(http: httpx.AsyncClient, tid: str, human: Player, view: JSON) -> JSON:
    """The person's next move; a rematch when a short match already ended (target 30)."""
    if view["game"]["match"]["status"] == "finished":
        path, body = "rematch", None
    else:
        path, body = choose(view)
    r = await http.post(f"/v1/tables/{tid}/{path}", json=body, headers=human.auth)
    assert r.status_code == 200, r.text
    table: JSON = r.json()["table"]
    return table


async def test_a_bot_pauses_before_it_draws_and_before_it_discards(
    fresh_url: str, http: httpx.AsyncClient
) -> None:
    pause = 0.3
    server = start_server(fresh_url, bot_draw_delay=pause, bot_discard_delay=pause)
    try:
        http.base_url = httpx.URL(server.url)
        tid, human = await bot_table(http)
        view = await get_table(http, tid, human)
        # Up to the bot's first draw from the stock or the pile (the upcard offer may come first).
        while view["game"]["hand"]["turn"] != 1 or view["game"]["hand"]["phase"] != "draw":
            if view["game"]["hand"]["turn"] == 1:
                view = await _next_version(http, tid, human, view["version"])
                continue
            view = await _person_moves(http, tid, human, view)
        asked = time.monotonic()
        drawn = await _next_version(http, tid, human, view["version"])
        took = time.monotonic()
        assert drawn["game"]["hand"]["phase"] == "discard"
        await _next_version(http, tid, human, drawn["version"])
        threw = time.monotonic()
        assert took - asked >= pause * 0.9 and threw - took >= pause * 0.9
    finally:
        server.stop()


async def test_a_bot_whose_turn_it_was_acts_after_a_restart(
    fresh_url: str, http: httpx.AsyncClient
) -> None:
    # The first server's bot waits longer than the test: it never gets to move.
    first = start_server(fresh_url, bot_draw_delay=60.0, bot_discard_delay=60.0)
    try:
        http.base_url = httpx.URL(first.url)
        tid, human = await bot_table(http)
        view = await get_table(http, tid, human)
        while view["game"]["hand"]["turn"] != 1:
            view = await _person_moves(http, tid, human, view)
        await asyncio.sleep(0.2)
        assert not bot_moves(await log(http, tid))
    finally:
        first.stop()
    second = start_server(fresh_url)
    try:
        http.base_url = httpx.URL(second.url)
        await my_turn(http, tid, human)
        assert bot_moves(await log(http, tid))
        view = await play_person([http], tid, human)
        assert view["game"]["match"]["status"] == "finished"
    finally:
        second.stop()


async def test_two_servers_apply_each_bot_move_once(fresh_url: str) -> None:
    # Leases that lapse between two looks: both processes keep acting for the bot, and only
    # the version each move is pinned to keeps every move single.
    fast = {"bot_scan_interval": 0.02, "bot_lease_seconds": 0.001}
    servers = [start_server(fresh_url, **fast), start_server(fresh_url, **fast)]
    try:
        async with (
            httpx.AsyncClient(base_url=servers[0].url, timeout=30) as a,
            httpx.AsyncClient(base_url=servers[1].url, timeout=30) as b,
        ):
            tid, human = await bot_table(a, "hard")
            await play_one_hand_then_resign(a, tid, human, [a, b], hands=2)
            moves = bot_moves(await log(b, tid))
        runners = [_runner(s) for s in servers]
        assert sum(r.moves for r in runners) == len(moves)
    finally:
        for server in servers:
            server.stop()
