"""Clocks on a real server (SQLite and PostgreSQL): each time control and timeout policy with
short clocks, abandonment, a restart with a deadline pending, and two servers on one deadline.

Timeouts are polled for with generous limits (the machine is loaded); the runner's tolerance
is its scan interval (0.25 s by default) plus a commit.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from app.engine.verify import verify
from tests.api.conftest import sqlite_only, start_server
from tests.api.helpers import JSON, Player, choose, get_table, rematch, seated_table
from tests.api.processes import processes
from tests.waiting import until, wait_for

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs/schemas/match-record.schema.json").read_text()
)


async def events(client: httpx.AsyncClient, table_id: str, who: Player) -> list[JSON]:
    r = await client.get(f"/v1/tables/{table_id}/events", headers=who.auth)
    assert r.status_code == 200, r.text
    out: list[JSON] = r.json()
    return out


async def finished(client: httpx.AsyncClient, table_id: str, who: Player) -> JSON | None:
    view = await get_table(client, table_id, who)
    return view if view["game"]["match"]["status"] == "finished" else None


async def play_once(client: httpx.AsyncClient, table_id: str, who: Player) -> JSON:
    view = await get_table(client, table_id, who)
    path, body = choose(view)
    r = await client.post(f"/v1/tables/{table_id}/{path}", json=body, headers=who.auth)
    assert r.status_code == 200, r.text
    out: JSON = r.json()
    return out


def clock(control: str, seconds: float, policy: str, **more: Any) -> JSON:
    return {"clock": {"control": control, "seconds": seconds, "policy": policy, **more}}


async def opened(client: httpx.AsyncClient, table_id: str, players: list[Player]) -> int:
    """Both seats make their first move of the match (a seat that never moved would have the
    match aborted rather than lost); the seat to move now."""
    moved: set[int] = set()
    while True:
        turn = int((await get_table(client, table_id, players[0]))["game"]["hand"]["turn"])
        if moved == {0, 1}:
            return turn
        await play_once(client, table_id, players[turn])
        moved.add(turn)


async def test_every_view_shows_the_clock_as_server_times(client: httpx.AsyncClient) -> None:
    table_id, players = await seated_table(client, **clock("per_move", 600, "claim"))
    view = await get_table(client, table_id, players[0])
    seat = view["game"]["hand"]["turn"]
    shown = view["clock"]
    assert shown["control"] == "per_move" and shown["running"] == seat
    deadline = datetime.fromisoformat(shown["deadline"])
    server_time = datetime.fromisoformat(shown["server_time"])
    assert 590 < (deadline - server_time).total_seconds() <= 600
    assert shown["remaining"][1 - seat] == 600
    spectator = await get_table(client, table_id, None)
    assert spectator["clock"]["deadline"] == shown["deadline"]
    plain, _ = await seated_table(client)
    assert (await get_table(client, plain, players[0]))["clock"]["control"] == "none"


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        ({"control": "per_move"}, "invalid_request"),
        ({"control": "bank", "seconds": 10, "cap": 5}, "invalid_time_control"),
        ({"control": "bank", "seconds": 10, "bonus": 11}, "invalid_time_control"),
        # The schema says which fields each control takes (a union told apart by control).
        ({"control": "per_move", "seconds": 10, "bonus": 3}, "invalid_request"),
        ({"control": "none", "seconds": 5}, "invalid_request"),
        ({"control": "per_move", "seconds": -1}, "invalid_request"),
        ({"control": "sundial", "seconds": 10}, "invalid_request"),
    ],
)
@sqlite_only
async def test_a_bad_time_control_is_refused(
    client: httpx.AsyncClient, bad: JSON, code: str
) -> None:
    r = await client.post("/v1/players", json={"name": "Cy"})
    token = r.json()["token"]
    r = await client.post(
        "/v1/tables", json={"clock": bad}, headers={"Authorization": f"Bearer {token}"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["code"] == code


async def test_forfeit_ends_the_match_as_a_loss_with_its_own_reason(
    client: httpx.AsyncClient,
) -> None:
    table_id, players = await seated_table(client, **clock("per_move", 2, "forfeit"))
    late = await opened(client, table_id, players)
    view = await until(lambda: finished(client, table_id, players[0]), 30)
    match = view["game"]["match"]
    assert match["winner"] == 1 - late
    assert view["clock"]["running"] is None and view["clock"]["deadline"] is None
    # The loser's clock stopped where it ran out, and says whose it was.
    assert view["clock"]["expired"] == late and view["clock"]["remaining"][late] == 0
    log = await events(client, table_id, players[0])
    assert [e for e in log if e["type"] == "timed_out"] == [
        {"seq": log[-2]["seq"], "type": "timed_out", "seat": late, "reason": "timeout"}
    ]
    assert log[-1]["type"] == "match_over" and log[-1]["reason"] == "timeout"
    r = await client.get("/v1/players/me/matches", headers=players[late].auth)
    assert [(m["result"], m["reason"]) for m in r.json()] == [("loss", "timeout")]
    record = (await client.get(f"/v1/matches/{table_id}-1/record")).json()
    jsonschema.validate(record, SCHEMA)
    verify(record)
    assert record["hands"][-1]["actions"][-1] == {
        "seat": late,
        "kind": "forfeit",
        "reason": "timeout",
    }


@pytest.mark.parametrize(
    ("policy", "first_moves"),
    [("forfeit", False), ("forfeit", True), ("claim", False), ("autoplay", False)],
)
async def test_a_seat_that_never_moved_has_the_match_aborted_unrated(
    client: httpx.AsyncClient, policy: str, first_moves: bool
) -> None:
    """A rated table's match whose late seat never made its first move ends with no result:
    no winner, no rating change, no match in anyone's history; the table may play again."""
    table_id, players = await seated_table(client, rated=True, **clock("per_move", 1, policy))
    if first_moves:  # the first seat plays its turn; the other never moves
        first = (await get_table(client, table_id, players[0]))["game"]["hand"]["turn"]
        while (await get_table(client, table_id, players[0]))["game"]["hand"]["turn"] == first:
            await play_once(client, table_id, players[first])
    late = (await get_table(client, table_id, players[0]))["game"]["hand"]["turn"]
    view = await until(lambda: finished(client, table_id, players[0]), 30)
    match = view["game"]["match"]
    assert (match["winner"], match["finish_reason"]) == (None, "aborted")
    assert match["final_scores"] == match["scores"]
    assert view["status"] == "finished" and view["clock"]["running"] is None
    log = await events(client, table_id, players[1 - late])
    assert [{k: e[k] for k in ("type", "seat", "reason")} for e in log[-2:-1]] == [
        {"type": "match_aborted", "seat": late, "reason": "timeout"}
    ]
    assert log[-1]["type"] == "match_over" and log[-1]["winner"] is None
    assert log[-1]["reason"] == "aborted"
    assert not [e for e in log if e["type"] in ("time_expired", "timed_out")]
    for who in players:
        r = await client.get("/v1/players/me/matches", headers=who.auth)
        assert r.json() == []
        profile = (await client.get(f"/v1/players/{who.id}")).json()
        assert (profile["won"], profile["lost"], profile["ratings"]) == (0, 0, [])
    r = await client.get(f"/v1/matches/{table_id}-1/record")
    assert r.status_code == 404 and r.json()["code"] == "match_not_found"
    await rematch(client, table_id, players[late], players[1 - late])


async def test_claim_waits_for_the_opponent_and_the_late_player_may_still_move(
    client: httpx.AsyncClient,
) -> None:
    table_id, players = await seated_table(client, **clock("per_move", 2, "claim"))
    late = await opened(client, table_id, players)
    waiting = players[1 - late]
    r = await client.post(f"/v1/tables/{table_id}/claim", headers=waiting.auth)
    assert r.status_code == 409 and r.json()["code"] == "nothing_to_claim"

    async def expired(seat: int) -> JSON | None:
        view = await get_table(client, table_id, players[0])
        return view if view["clock"]["expired"] == seat else None

    view = await until(lambda: expired(late))
    assert view["clock"]["deadline"] is None and view["game"]["match"]["status"] == "playing"
    assert (await events(client, table_id, waiting))[-1]["type"] == "time_expired"
    # The late player moves first: nothing to claim any more.
    moved = await play_once(client, table_id, players[late])
    assert moved["table"]["clock"]["expired"] is None
    r = await client.post(f"/v1/tables/{table_id}/claim", headers=waiting.auth)
    assert r.status_code == 409, r.text
    # Whoever is on the clock now runs out too, and this time the opponent claims.
    running = moved["table"]["clock"]["running"]
    await until(lambda: expired(running))
    r = await client.post(f"/v1/tables/{table_id}/claim", headers=players[1 - running].auth)
    assert r.status_code == 200, r.text
    match = r.json()["table"]["game"]["match"]
    assert match["status"] == "finished" and match["winner"] == 1 - running
    assert r.json()["events"][-1]["reason"] == "timeout"
    stopped = r.json()["table"]["clock"]
    assert (stopped["running"], stopped["expired"], stopped["remaining"][running]) == (
        None,
        running,
        0,
    )


async def test_autoplay_plays_for_the_absent_seat_until_its_person_returns(
    client: httpx.AsyncClient,
) -> None:
    table_id, players = await seated_table(
        client, **clock("per_move", 3, "autoplay", autoplay_level="easy")
    )
    late = await opened(client, table_id, players)
    present = players[1 - late]

    async def bot_moves() -> list[JSON]:
        log = await events(client, table_id, present)
        expired = [e for e in log if e["type"] == "time_expired"]
        if not expired:
            return []
        assert expired == [
            {
                "seq": expired[0]["seq"],
                "type": "time_expired",
                "seat": late,
                "policy": "autoplay",
                "bot": {"level": "easy", "name": "TITO"},
            }
        ]
        return [e for e in log if e["seq"] > expired[0]["seq"] and e.get("seat") == late]

    async def play_present() -> None:
        view = await get_table(client, table_id, present)
        hand = view["game"]["hand"]
        if hand["phase"] == "over" or hand["turn"] == 1 - late:
            await play_once(client, table_id, present)

    # The bot plays the absent seat's turns (after each one's grace) while the other plays.
    end = time.monotonic() + 60
    while len(await bot_moves()) < 3:
        assert time.monotonic() < end, "the bot did not play the absent seat"
        await play_present()
        await asyncio.sleep(0.1)
    # The person comes back within the grace and moves: the bot lets go of the seat.
    while True:
        assert time.monotonic() < end, "the person never got their turn back"
        await play_present()
        view = await get_table(client, table_id, players[late])
        hand = view["game"]["hand"]
        if hand["phase"] != "over" and hand["turn"] == late:
            assert view["clock"]["autoplay"] == late
            path, body = choose(view)
            r = await client.post(
                f"/v1/tables/{table_id}/{path}", json=body, headers=players[late].auth
            )
            if r.status_code == 200:
                assert r.json()["table"]["clock"]["autoplay"] is None
                assert r.json()["table"]["clock"]["expired"] is None
                break
        await asyncio.sleep(0.05)


async def test_the_bank_gains_its_bonus_up_to_its_cap(client: httpx.AsyncClient) -> None:
    table_id, players = await seated_table(client, **clock("bank", 30, "forfeit", bonus=10, cap=35))
    view = await get_table(client, table_id, players[0])
    seat = view["game"]["hand"]["turn"]
    # Play this seat's whole turn (the upcard offer is one move, a draw and discard two).
    while True:
        view = (await play_once(client, table_id, players[seat]))["table"]
        if view["game"]["hand"]["turn"] != seat:
            break
    left = view["clock"]["remaining"][seat]
    assert view["clock"]["running"] == 1 - seat
    assert left == 35  # 30 less a few seconds, plus 10, capped at 35


def test_abandonment_may_be_claimed_by_the_waiting_player(database_url: str) -> None:
    server = start_server(database_url, abandon_after_days=2 / 86400)
    try:

        async def run() -> None:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                table_id, players = await seated_table(client)
                untouched, strangers = await seated_table(client)
                late = await opened(client, table_id, players)
                waiting = players[1 - late]
                r = await client.post(f"/v1/tables/{table_id}/claim", headers=players[late].auth)
                assert r.status_code == 409, r.text  # the seat to move claims nothing
                r = await client.post(f"/v1/tables/{table_id}/claim", headers=waiting.auth)
                assert r.status_code == 409 and r.json()["code"] == "nothing_to_claim"
                await asyncio.sleep(2.2)
                r = await client.post(f"/v1/tables/{table_id}/claim", headers=waiting.auth)
                assert r.status_code == 200, r.text
                assert r.json()["events"][0] == {
                    "seq": r.json()["events"][0]["seq"],
                    "type": "timed_out",
                    "seat": late,
                    "reason": "abandoned",
                }
                r = await client.get("/v1/players/me/matches", headers=waiting.auth)
                assert [(m["result"], m["reason"]) for m in r.json()] == [("win", "abandoned")]
                # At a table where the silent seat never moved, the claim aborts the match.
                view = await get_table(client, untouched, strangers[0])
                silent = view["game"]["hand"]["turn"]
                r = await client.post(
                    f"/v1/tables/{untouched}/claim", headers=strangers[1 - silent].auth
                )
                assert r.status_code == 200, r.text
                assert [e["type"] for e in r.json()["events"]] == ["match_aborted", "match_over"]
                assert r.json()["events"][0]["reason"] == "abandoned"
                r = await client.get("/v1/players/me/matches", headers=strangers[1 - silent].auth)
                assert r.json() == []

        asyncio.run(run())
    finally:
        server.stop()


def test_a_deadline_pending_across_a_restart_fires_once(database_url: str) -> None:
    first = start_server(database_url)
    holder: dict[str, Any] = {}

    async def create() -> None:
        async with httpx.AsyncClient(base_url=first.url, timeout=30) as client:
            table_id, players = await seated_table(client, **clock("per_move", 3, "forfeit"))
            shown = (await get_table(client, table_id, players[0]))["clock"]
            holder.update(
                table_id=table_id,
                players=players,
                deadline=datetime.fromisoformat(shown["deadline"]),
            )

    try:
        asyncio.run(create())
    finally:
        first.stop()
    # The deadline passes while no server runs.
    wait_for(lambda: datetime.now(UTC) > holder["deadline"], what="the deadline to pass")
    second = start_server(database_url)

    async def check() -> None:
        async with httpx.AsyncClient(base_url=second.url, timeout=30) as client:
            table_id, players = holder["table_id"], holder["players"]
            started = time.monotonic()
            await until(lambda: finished(client, table_id, players[0]), 30)
            assert time.monotonic() - started < 10
            await asyncio.sleep(1.0)  # room for a second, wrong, timeout
            log = await events(client, table_id, players[0])
            assert len([e for e in log if e["type"] == "match_over"]) == 1

    try:
        asyncio.run(check())
    finally:
        second.stop()


def test_two_processes_one_deadline_one_timeout(database_url: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": database_url, "CLOCK_SCAN_INTERVAL": "0.02", "CLOCK_MIN_PER_MOVE": "1"}
    with processes(tmp_path, 2, **env) as servers:

        async def run() -> None:
            async with (
                httpx.AsyncClient(base_url=servers[0].url, timeout=30) as a,
                httpx.AsyncClient(base_url=servers[1].url, timeout=30) as b,
            ):
                tables = []
                for i in range(8):
                    client = (a, b)[i % 2]
                    tables.append(await seated_table(client, **clock("per_move", 1, "forfeit")))
                for table_id, players in tables:

                    async def done(t: str = table_id, p: Player = players[0]) -> JSON | None:
                        return await finished(a, t, p)

                    await until(done, 60)
                await asyncio.sleep(1.0)
                for table_id, players in tables:
                    log = await events(b, table_id, players[0])
                    # Nobody moved: each match is aborted, once.
                    assert len([e for e in log if e["type"] == "match_aborted"]) == 1
                    assert len([e for e in log if e["type"] == "match_over"]) == 1

        asyncio.run(run())
