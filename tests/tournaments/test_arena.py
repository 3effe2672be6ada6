"""An arena of built-in bots on a real server: paired again as soon as free, never the same
opponent twice in a row, never two matches at once; it ends at its end time and pairs nobody
after it; its standings are those recomputed from its export."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from tests.api.conftest import Server, start_server
from tests.api.helpers import JSON, new_player
from tests.tournaments.helpers import SHORT, create, enter_bots, finished, recompute

LEVELS = ["easy", "medium", "easy", "medium", "easy"]


@pytest.fixture(scope="module")
def arena_server(module_db: str) -> Iterator[Server]:
    running = start_server(module_db, tournament_min_duration=2)
    yield running
    running.stop()


@pytest.fixture
async def http(arena_server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=arena_server.url, timeout=30) as client:
        yield client


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _pairings(t: JSON) -> list[JSON]:
    return [p for r in t["rounds"] for p in r["pairings"]]


async def test_an_arena_of_bots_runs_to_its_end_time_and_stops_pairing(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    organiser = await new_player(http, "Org")
    t = await create(http, organiser, format="arena", duration=5, rules=SHORT, admits="bots")
    tid = t["tournament_id"]
    await enter_bots(http, organiser, tid, LEVELS)
    assert (await http.post(f"/v1/tournaments/{tid}/start", headers=organiser.auth)).is_success

    done = await finished(http, tid, timeout=60)
    ends = _at(done["ends_at"])
    assert _at(done["finished_at"]) >= ends
    pairings = _pairings(done)
    assert len(pairings) > len(LEVELS) // 2  # paired again after the first matches
    assert all(_at(p["created_at"]) < ends for p in pairings)
    assert {p["status"] for p in pairings} <= {"finished", "unfinished"}
    for p in pairings:
        if p["status"] == "unfinished":  # still being played at the end: counts nothing
            assert p["winner"] is None

    for entrant in (e["id"] for e in done["entrants"]):
        mine = sorted(
            (p for p in pairings if entrant in (p["seat0"], p["seat1"])),
            key=lambda p: p["number"],
        )
        opponents = [p["seat1"] if p["seat0"] == entrant else p["seat0"] for p in mine]
        assert all(a != b for a, b in itertools.pairwise(opponents)), opponents
        for before, after in itertools.pairwise(mine):  # one match at a time
            assert before["finished_at"] is not None
            assert _at(before["finished_at"]) <= _at(after["created_at"])

    await asyncio.sleep(1.5)  # a scheduler still pairing would have paired by now
    later = (await http.get(f"/v1/tournaments/{tid}")).json()
    assert len(_pairings(later)) == len(pairings)

    export = (await http.get(f"/v1/tournaments/{tid}/export")).json()
    assert recompute(export, tmp_path) == done["standings"]
    assert done["standings"][0]["score"] > 0
