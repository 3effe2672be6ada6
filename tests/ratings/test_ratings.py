"""Ratings over HTTP: rated and casual tables, win, loss, resignation, a bot opponent, nothing
for an unfinished match, the leaderboard, public profiles, and one update under a race of two
server processes on one PostgreSQL database."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import func, select

from app.service import ratings
from app.store import Database
from app.store.models import Player as PlayerRow
from app.store.models import Rating, RatingChange
from app.table.glicko2 import Game, rate
from app.table.time import utcnow
from tests.api.conftest import pg_database, start_server
from tests.api.helpers import (
    JSON,
    Player,
    new_player,
    new_table,
    play_until,
    rematch,
    seated_table,
    step,
    strings_in,
)

CARD = re.compile(r"^[A2-9TJQK][CDHS]$")
SEED = re.compile(r"^[0-9a-f]{64}$")


async def profile(client: httpx.AsyncClient, player: Player) -> JSON:
    r = await client.get(f"/v1/players/{player.id}")
    assert r.status_code == 200, r.text
    body: JSON = r.json()
    return body


def assert_nothing_hidden(body: JSON) -> None:
    for s in strings_in(body):
        assert not CARD.match(s) and not SEED.match(s), s


async def test_a_rated_match_to_the_target_moves_both_ratings(client: httpx.AsyncClient) -> None:
    table_id, players = await seated_table(client, rated=True)
    final = await play_until(client, table_id, players)
    assert final["rated"] is True
    winner = final["game"]["match"]["winner"]
    expected = {
        seat: rate(ratings.START, [Game(ratings.START, 1.0 if seat == winner else 0.0)], 0.5)
        for seat in (0, 1)
    }
    for seat, player in enumerate(players):
        body = await profile(client, player)
        assert_nothing_hidden(body)
        [standard] = body["ratings"]
        assert standard["category"] == "standard" and standard["games"] == 1
        assert standard["rating"] == pytest.approx(expected[seat].rating, abs=0.05)
        assert standard["provisional"] is True
        assert (standard["wins"], standard["losses"]) == ((1, 0) if seat == winner else (0, 1))
        assert (body["won"], body["lost"]) == ((1, 0) if seat == winner else (0, 1))
        [change] = body["history"]
        assert change["match_id"] == f"{table_id}-1"
        assert change["before"] == 1500 and (change["change"] > 0) == (seat == winner)

        [mine] = (await client.get("/v1/players/me/matches", headers=player.auth)).json()
        assert mine["match_id"] == f"{table_id}-1"
        assert mine["rating"]["change"] == change["change"]
        assert mine["rating"]["after"] == pytest.approx(expected[seat].rating, abs=0.05)


async def test_resignation_is_a_loss_and_the_next_match_counts_again(
    client: httpx.AsyncClient,
) -> None:
    table_id, (p0, p1) = await seated_table(client, rated=True)
    await step(client, table_id, [p0, p1])
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=p0.auth)
    assert r.status_code == 200, r.text
    first = (await profile(client, p0))["ratings"][0]
    assert first["rating"] < 1500 and first["losses"] == 1
    assert (await profile(client, p1))["ratings"][0]["rating"] > 1500

    await rematch(client, table_id, p0, p1)
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=p1.auth)
    assert r.status_code == 200, r.text
    again = (await profile(client, p0))["ratings"][0]
    assert again["games"] == 2 and again["rating"] > first["rating"]
    assert again["deviation"] < first["deviation"]
    history = (await profile(client, p0))["history"]
    assert [h["match_id"] for h in history] == [f"{table_id}-2", f"{table_id}-1"]
    assert [h["result"] for h in history] == ["win", "loss"]


async def test_an_unfinished_or_casual_match_changes_nothing(client: httpx.AsyncClient) -> None:
    table_id, players = await seated_table(client, rated=True)
    for _ in range(6):
        await step(client, table_id, players)
    casual_id, casual = await seated_table(client)
    r = await client.post(f"/v1/tables/{casual_id}/resign", headers=casual[0].auth)
    assert r.status_code == 200, r.text
    for player in [*players, *casual]:
        body = await profile(client, player)
        assert body["ratings"] == [] and body["history"] == []
    [mine] = (await client.get("/v1/players/me/matches", headers=casual[0].auth)).json()
    assert mine["rating"] is None


async def test_a_rated_table_plays_its_preset_unchanged(client: httpx.AsyncClient) -> None:
    ada = await new_player(client)
    r = await client.post(
        "/v1/tables", json={"rated": True, "rules": {"target": 50}}, headers=ada.auth
    )
    assert r.status_code == 422 and r.json()["code"] == "rated_overrides"
    table = await new_table(client, ada, preset="oklahoma", rated=True)
    assert table["rated"] is True
    assert (await new_table(client, ada))["rated"] is False


async def test_a_match_against_a_bot_rates_the_person_against_the_bots_fixed_rating(
    client: httpx.AsyncClient,
) -> None:
    human = await new_player(client, "Ada")
    table = await new_table(client, human, rated=True)
    tid = table["table_id"]
    r = await client.post(f"/v1/tables/{tid}/bot", json={"level": "easy"}, headers=human.auth)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tables/{tid}/start", headers=human.auth)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tables/{tid}/resign", headers=human.auth)
    assert r.status_code == 200, r.text
    [standard] = (await profile(client, human))["ratings"]
    expected = rate(ratings.START, [Game(ratings.bot_glicko("easy"), 0.0)], ratings.TAU)
    assert standard["rating"] == pytest.approx(expected.rating, abs=0.05)
    # Losing to the weaker bot costs more than losing to an even opponent would.
    even = rate(ratings.START, [Game(ratings.START, 0.0)], ratings.TAU)
    assert standard["rating"] < even.rating

    board = (await client.get("/v1/leaderboards/standard")).json()
    assert {b["name"]: b["rating"] for b in board["bots"]} == {
        "TITO": ratings.BOT_RATINGS["easy"],
        "CARMEN": ratings.BOT_RATINGS["medium"],
        "LUNA": ratings.BOT_RATINGS["hard"],
    }


async def test_the_leaderboard_pages_settled_recent_players_best_first(
    client: httpx.AsyncClient, database_url: str
) -> None:
    now = utcnow()
    tag = uuid.uuid4().hex[:6]
    settled: list[tuple[float, str]] = []
    others: list[tuple[float, str]] = []
    db = Database(database_url)
    try:
        async with db.write() as session:
            for i in range(70):
                pid = uuid.uuid4().hex
                session.add(PlayerRow(id=pid, name=f"{tag}-{i}", created_at=now))
                kind = ("settled", "provisional", "stale")[i % 3] if i < 45 else "settled"
                deviation = 60.0 + i % 40 if kind != "provisional" else 200.0
                played = now - (timedelta(days=90) if kind == "stale" else timedelta(hours=i))
                rating = 1200.0 + 7.5 * ((i * 37) % 70)
                session.add(
                    Rating(
                        player_id=pid,
                        category="classic",
                        rating=rating,
                        deviation=deviation,
                        volatility=0.06,
                        games=10,
                        wins=6,
                        losses=4,
                        last_played_at=played,
                    )
                )
                (settled if kind == "settled" else others).append((rating, pid))
    finally:
        await db.close()
    entries = []
    for offset in range(0, 100, 20):
        r = await client.get("/v1/leaderboards/classic", params={"offset": offset, "limit": 20})
        assert r.status_code == 200, r.text
        page = r.json()
        assert len(page["entries"]) == min(20, max(0, len(settled) - offset))
        entries += page["entries"]
        assert_nothing_hidden(page)
    assert [e["player"]["id"] for e in entries] == [p for _, p in sorted(settled, reverse=True)]
    assert [e["rank"] for e in entries] == list(range(1, len(settled) + 1))
    assert not any(e["provisional"] for e in entries)
    # Walking each page's next gives the same entries and ranks, and the last page has none.
    walked: list[JSON] = []
    params: dict[str, str | int] = {"limit": 13}
    while True:
        r = await client.get("/v1/leaderboards/classic", params=params)
        assert r.status_code == 200, r.text
        page = r.json()
        walked += page["entries"]
        if page["next"] is None:
            break
        params = {"limit": 13, "after": page["next"]}
    assert walked == entries
    # An offset after a cursor skips from there.
    first = (await client.get("/v1/leaderboards/classic", params={"limit": 5})).json()
    r = await client.get(
        "/v1/leaderboards/classic", params={"limit": 5, "offset": 10, "after": first["next"]}
    )
    assert r.json()["entries"] == entries[15:20]
    for bad in ("", "x", "WzEsMiwzXQ", "W1swXV0", "%00", "WzAsMTIwMCwiYSJd", "a" * 201):
        r = await client.get(f"/v1/leaderboards/classic?after={bad}")
        assert r.status_code == 422, bad
        assert r.json()["code"] in ("invalid_cursor", "invalid_request"), bad
    assert (await client.get("/v1/leaderboards/nope")).status_code == 404
    assert (await client.get("/v1/leaderboards/classic?limit=101")).status_code == 422
    for unknown in ("0" * 32, "%00", "x" * 100):
        assert (await client.get(f"/v1/players/{unknown}")).status_code == 404


@pytest.fixture
def race_url(database_url: str) -> Iterator[str]:
    if not database_url.startswith("postgresql"):
        pytest.skip("two processes on one database: PostgreSQL")
    with pg_database("ginrummy_race") as url:
        yield url


async def test_two_processes_racing_to_finish_a_match_rate_it_once(race_url: str) -> None:
    url, rounds = race_url, 4
    a, b = start_server(url), start_server(url)
    try:
        async with (
            httpx.AsyncClient(base_url=a.url, timeout=30) as ca,
            httpx.AsyncClient(base_url=b.url, timeout=30) as cb,
        ):
            table_id, (p0, p1) = await seated_table(ca, rated=True)
            for n in range(1, rounds + 1):
                if n > 1:
                    await rematch(ca, table_id, p0, p1)
                # Both resign at once, each through another process, and p1 twice.
                answers = await asyncio.gather(
                    ca.post(f"/v1/tables/{table_id}/resign", headers=p0.auth),
                    cb.post(f"/v1/tables/{table_id}/resign", headers=p1.auth),
                    ca.post(f"/v1/tables/{table_id}/resign", headers=p1.auth),
                )
                codes = sorted(r.status_code for r in answers)
                assert codes == [200, 409, 409], [r.text for r in answers]
        db = Database(url)
        try:
            async with db.read() as session:
                changes = (
                    await session.execute(
                        select(RatingChange.player_id, func.count()).group_by(
                            RatingChange.player_id
                        )
                    )
                ).all()
                rows = (await session.execute(select(Rating))).scalars().all()
        finally:
            await db.close()
        assert sorted(count for _, count in changes) == [rounds, rounds]
        assert sorted(r.games for r in rows) == [rounds, rounds]
        assert all(r.wins + r.losses == rounds for r in rows)
    finally:
        a.stop()
        b.stop()
