"""The bot ladder on a real server: two bot kits in ladder mode say they are available, are
paired (with each other or an anchor) at rated tables, play to the end and their ratings move;
``/v1/bots/online`` and ``/v1/bots/ladder`` show them; no bot is ever at two ladder tables at
once; availability lapses; tournaments admit bot accounts only when they admit bots."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from ginrummy_client.bot import BotKit, Config
from tests.api.conftest import Server, start_server
from tests.api.helpers import JSON, Player, new_player
from tests.tournaments.helpers import create
from tests.waiting import until


@pytest.fixture(scope="module")
def ladder_server(module_db: str) -> Iterator[Server]:
    running = start_server(
        module_db, ladder_available_seconds=2.0, ladder_target=10, ladder_move_seconds=10.0
    )
    yield running
    running.stop()


@pytest.fixture
async def http(ladder_server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=ladder_server.url, timeout=30) as client:
        yield client


async def new_bot(client: httpx.AsyncClient, name: str) -> Player:
    r = await client.post("/v1/players", json={"name": name, "bot": True})
    assert r.status_code == 201, r.text
    body = r.json()
    return Player(body["id"], body["name"], body["token"])


def easy(view: dict[str, Any]) -> dict[str, Any]:
    """Knock when it can, else take the stock and shed the first legal discard."""
    legal = view["game"]["legal"]
    if legal["knock_discards"]:
        return {"kind": "knock", "card": legal["knock_discards"][0]["card"]}
    for kind in ("pass", "draw_stock"):
        if kind in legal["actions"]:
            return {"kind": kind}
    return {"kind": "discard", "card": legal["discards"][0]}


async def _pairings(database_url: str) -> list[Any]:
    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as conn:
            query = sa.text(
                "SELECT seat0, seat1, status, created_at, finished_at FROM tournament_pairings"
                " WHERE tournament_id = 'ladder' ORDER BY number"
            )
            return list((await conn.execute(query)).all())
    finally:
        await engine.dispose()


def _at(value: Any) -> datetime:
    if value is None:
        return datetime.now(UTC)
    when = datetime.fromisoformat(value) if isinstance(value, str) else value
    return when if when.tzinfo else when.replace(tzinfo=UTC)


async def test_two_ladder_kits_are_paired_play_rated_matches_and_move(
    http: httpx.AsyncClient, ladder_server: Server
) -> None:
    bots = [await new_bot(http, name) for name in ("Ada", "Bob")]
    kits = [
        BotKit(Config(server=ladder_server.url, token=b.token, ladder=True), easy) for b in bots
    ]
    runs = [asyncio.create_task(kit.run()) for kit in kits]
    try:
        online = await until(
            lambda: _online(http, {b.id for b in bots}), what="both bots online", every=0.2
        )
        assert {row["name"] for row in online} == {"Ada", "Bob"}

        async def played() -> list[JSON] | None:
            r = await http.get("/v1/bots/ladder")
            assert r.status_code == 200, r.text
            rows: list[JSON] = r.json()["standings"]
            mine = [row for row in rows if row["player_id"] in {b.id for b in bots}]
            return rows if len(mine) == 2 and all(row["games"] >= 2 for row in mine) else None

        rows = await until(played, timeout=240, what="two ladder games each", every=0.5)
    finally:
        for run in runs:
            run.cancel()
        for run in runs:
            with contextlib.suppress(asyncio.CancelledError):
                await run

    anchors = {row["anchor"] for row in rows if row["anchor"]}
    assert anchors == {"easy", "medium", "hard"}  # TITO, CARMEN, LUNA stand in it
    for row in rows:
        low, high = row["interval"]
        assert low < row["rating"] < high
        if row["player_id"] is not None:
            assert row["rating"] != 1500.0 and row["deviation"] < 350.0  # rated: it moved
    assert [row["rank"] for row in rows] == list(range(1, len(rows) + 1))
    assert [row["rating"] for row in rows] == sorted((row["rating"] for row in rows), reverse=True)

    pairings = await _pairings(ladder_server.settings.database_url)
    ids = {b.id for b in bots}
    assert all(p.seat0 in ids for p in pairings)  # an account in each, the anchors never alone
    for entrant in ids | {f"bot-{level}" for level in anchors}:
        spans = sorted(
            (_at(p.created_at), _at(p.finished_at))
            for p in pairings
            if entrant in (p.seat0, p.seat1)
        )
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert start >= end, f"{entrant} at two ladder tables at once"
    by_bot: dict[str, list[str]] = {b: [] for b in ids}
    for p in pairings:
        for me, other in ((p.seat0, p.seat1), (p.seat1, p.seat0)):
            if me in by_bot:
                by_bot[me].append(other)
    for opponents in by_bot.values():
        assert all(a != b for a, b in itertools.pairwise(opponents))


async def _online(http: httpx.AsyncClient, ids: set[str]) -> list[JSON] | None:
    r = await http.get("/v1/bots/online")
    assert r.status_code == 200, r.text
    assert all(row["anchor"] is None and row["available"] for row in r.json()["bots"])
    rows = [row for row in r.json()["bots"] if row["player_id"] in ids]
    return rows if len(rows) == len(ids) else None


async def test_availability_is_for_bot_accounts_and_lapses(http: httpx.AsyncClient) -> None:
    person = await new_player(http, "Hal")
    r = await http.put("/v1/bots/me/available", json={"available": True}, headers=person.auth)
    assert r.status_code == 403 and r.json()["code"] == "not_a_bot"

    bot = await new_bot(http, "Lapse")
    r = await http.put("/v1/bots/me/available", json={"available": True}, headers=bot.auth)
    assert r.status_code == 200, r.text
    assert r.json()["available"] is True and r.json()["renew_every"] == 1.0

    async def gone() -> bool:
        return await _online(http, {bot.id}) is None

    await until(gone, timeout=20, what="the availability's lapse", every=0.2)
    r = await http.put(
        "/v1/bots/me/available", json={"available": True, "for": 60}, headers=bot.auth
    )
    assert r.status_code == 422


async def test_tournaments_admit_bot_accounts_only_when_they_admit_bots(
    http: httpx.AsyncClient,
) -> None:
    organiser = await new_player(http, "Orla")
    person = await new_player(http, "Pia")
    bot = await new_bot(http, "Rex")
    humans = await create(http, organiser, format="swiss", rounds=1)
    bots_only = await create(http, organiser, format="swiss", rounds=1, admits="bots")
    both = await create(http, organiser, format="swiss", rounds=1, admits="both")
    assert (humans["admits"], bots_only["admits"], both["admits"]) == ("humans", "bots", "both")

    async def join(t: JSON, who: Player) -> httpx.Response:
        return await http.post(f"/v1/tournaments/{t['tournament_id']}/join", headers=who.auth)

    refused = await join(humans, bot)
    assert refused.status_code == 403 and refused.json()["code"] == "bots_not_admitted"
    refused = await join(bots_only, person)
    assert refused.status_code == 403 and refused.json()["code"] == "humans_not_admitted"
    assert (await join(bots_only, bot)).status_code == 200
    assert (await join(both, bot)).status_code == 200
    assert (await join(both, person)).status_code == 200
    assert (await join(humans, person)).status_code == 200

    listed = (await http.get("/v1/tournaments", params={"status": "upcoming"})).json()
    admits = {t["tournament_id"]: t["admits"] for t in listed["tournaments"]}
    assert admits[bots_only["tournament_id"]] == "bots"
    assert "ladder" not in admits  # the ladder is not one of the listed tournaments
