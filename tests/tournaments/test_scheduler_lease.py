"""The tournament scheduler across real processes on one PostgreSQL database: the process
holding a tournament's lease pairs it; killed with SIGKILL mid-round, another takes over, no
pairing is lost and no round is paired twice; two live processes never pair one twice, nor
seat a ladder bot twice."""

from __future__ import annotations

import itertools
import os
import re
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from tests.api.conftest import pg_database
from tests.api.helpers import new_player
from tests.api.processes import Process, processes
from tests.tournaments.helpers import SHORT, create, enter_bots, finished, pairs_of, recompute
from tests.waiting import until

ENV = {
    "TOURNAMENT_SCAN_INTERVAL": "0.2",
    "TOURNAMENT_LEASE_SECONDS": "1.5",
    "TOURNAMENT_MIN_DURATION": "2",
    "BOT_LEASE_SECONDS": "1.0",
    "BOT_SCAN_INTERVAL": "0.2",
}
PAIRED = re.compile(r"tournament (\w+): (\d+) pairings of round (\d+)")
SCHEDULED = "tournament {}: scheduled by this process"


@pytest.fixture
def pg_url() -> Iterator[str]:
    with pg_database("ginrummy_tourney") as url:
        yield url


def _plain(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def _leader(url: str, tournament_id: str) -> int | None:
    """The pid of the process holding the tournament's lease, if any."""
    conn = await asyncpg.connect(_plain(url))
    try:
        owner = await conn.fetchval(
            "SELECT lease_owner FROM tournaments WHERE id = $1", tournament_id
        )
    finally:
        await conn.close()
    return None if owner is None else int(owner.split("/")[1])


def _schedulers(servers: list[Process], tournament_id: str) -> list[int]:
    """How many times each process took the tournament's lease, by its log."""
    line = SCHEDULED.format(tournament_id)
    return [sum(line in text for text in s.lines()) for s in servers]


def _rounds_paired(servers: list[Process], tournament_id: str) -> Counter[int]:
    """How many times each round was paired, by the logs of every process."""
    return Counter(
        int(m.group(3))
        for s in servers
        for line in s.lines()
        if (m := PAIRED.search(line)) and m.group(1) == tournament_id
    )


async def test_a_killed_leader_loses_no_pairing_and_advances_each_round_once(
    pg_url: str, tmp_path: Path
) -> None:
    with processes(tmp_path, 2, DATABASE_URL=pg_url, **ENV) as servers:
        async with httpx.AsyncClient(base_url=servers[0].url, timeout=30) as http:
            organiser = await new_player(http, "Org")
            t = await create(http, organiser, format="swiss", rounds=3, rules=SHORT,
                             admits="bots")  # fmt: skip
            tid = t["tournament_id"]
            await enter_bots(http, organiser, tid, ["easy", "medium", "easy", "medium"])
            await http.post(f"/v1/tournaments/{tid}/start", headers=organiser.auth)
            # Mid-round: round 1 paired, its matches being played.
            await until(lambda: _view_round(http, tid, 1), timeout=30, what="round 1", every=0.05)
            pid = await until(lambda: _leader(pg_url, tid), what="a leader")
            leader = next(s for s in servers if s.process.pid == pid)
            survivor = next(s for s in servers if s is not leader)
            assert _schedulers([leader, survivor], tid) == [1, 0]  # the leader alone
            os.kill(pid, signal.SIGKILL)
            leader.process.wait()

        async with httpx.AsyncClient(base_url=survivor.url, timeout=30) as http:
            done = await finished(http, tid, timeout=120)
            export = (await http.get(f"/v1/tournaments/{tid}/export")).json()
        assert [r["number"] for r in done["rounds"]] == [1, 2, 3]
        assert all(len(r["pairings"]) == 2 for r in done["rounds"])
        assert all(p["status"] == "finished" for r in done["rounds"] for p in r["pairings"])
        pairs = pairs_of(done)
        assert len(set(pairs)) == 6
        assert _rounds_paired(servers, tid) == {1: 1, 2: 1, 3: 1}
        assert any(PAIRED.search(line) for line in survivor.lines())  # it took over
        # The lease: the leader scheduled alone until killed, then the survivor alone.
        assert _schedulers([leader, survivor], tid) == [1, 1]
        assert recompute(export, tmp_path) == done["standings"]


async def _view_round(http: httpx.AsyncClient, tid: str, number: int) -> bool:
    view = (await http.get(f"/v1/tournaments/{tid}")).json()
    return view["round"] >= number and bool(view["rounds"])


async def test_two_live_processes_pair_an_arena_once(pg_url: str, tmp_path: Path) -> None:
    with processes(tmp_path, 2, DATABASE_URL=pg_url, **ENV) as servers:
        async with httpx.AsyncClient(base_url=servers[1].url, timeout=30) as http:
            organiser = await new_player(http, "Org")
            t = await create(http, organiser, format="arena", duration=5, rules=SHORT,
                             admits="bots")  # fmt: skip
            tid = t["tournament_id"]
            await enter_bots(http, organiser, tid, ["easy", "medium", "easy", "medium", "easy"])
            await http.post(f"/v1/tournaments/{tid}/start", headers=organiser.auth)
            done = await finished(http, tid, timeout=60)
        pairings = [p for r in done["rounds"] for p in r["pairings"]]
        assert len(pairings) >= 2
        assert sorted(_schedulers(servers, tid)) == [0, 1]  # one process schedules it
        by_log = _rounds_paired(servers, tid)
        assert by_log and set(by_log.values()) == {1}  # each batch paired by one process
        for entrant in (e["id"] for e in done["entrants"]):
            playing = [p for p in pairings if entrant in (p["seat0"], p["seat1"])]
            spans = sorted((p["created_at"], p["finished_at"] or "~") for p in playing)
            assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans


async def test_two_live_processes_never_seat_a_ladder_bot_twice(
    pg_url: str, tmp_path: Path
) -> None:
    """The bot ladder under the same lease: bots that never move stay at their first ladder
    table; with two processes looking, none is paired again, each batch by one process."""
    env = {**ENV, "LADDER_MOVE_SECONDS": "600"}
    with processes(tmp_path, 2, DATABASE_URL=pg_url, **env) as servers:
        async with httpx.AsyncClient(base_url=servers[0].url, timeout=30) as http:
            bots = []
            for name in ("Ana", "Ben", "Cid", "Dot"):
                r = await http.post("/v1/players", json={"name": name, "bot": True})
                bots.append(r.json())
            for bot in bots:
                auth = {"Authorization": f"Bearer {bot['token']}"}
                r = await http.put("/v1/bots/me/available", json={"available": True}, headers=auth)
                assert r.status_code == 200, r.text

            async def seated() -> list[dict[str, object]] | None:
                rows = (await http.get("/v1/bots/online")).json()["bots"]
                return rows if len(rows) == 4 and all(r["table_id"] for r in rows) else None

            await until(seated, timeout=30, what="every bot at a ladder table", every=0.1)
            looks = _rounds_paired(servers, "ladder")
            # Many more looks (each renews the lease: a new lease_until): none may pair again.
            renewals: set[object] = set()

            async def looked() -> bool:
                conn = await asyncpg.connect(_plain(pg_url))
                try:
                    renewals.add(
                        await conn.fetchval(
                            "SELECT lease_until FROM tournaments WHERE id = 'ladder'"
                        )
                    )
                finally:
                    await conn.close()
                return len(renewals) >= 15

            await until(looked, timeout=60, what="the scheduler's looks", every=0.1)
        # Before the processes stop (the ladder runs on: a stopping leader hands it over).
        by_log = _rounds_paired(servers, "ladder")
        schedulers = _schedulers(servers, "ladder")
        conn = await asyncpg.connect(_plain(pg_url))
        try:
            rows = await conn.fetch(
                "SELECT seat0, seat1 FROM tournament_pairings"
                " WHERE tournament_id = 'ladder' AND status = 'playing'"
            )
        finally:
            await conn.close()
    seats = Counter(seat for row in rows for seat in (row["seat0"], row["seat1"]))
    assert all(n == 1 for n in seats.values()), seats  # nobody at two ladder tables
    assert {b["id"] for b in bots} <= set(seats)
    assert by_log == looks and set(by_log.values()) == {1}  # each batch by one process
    assert sorted(schedulers) == [0, 1]
