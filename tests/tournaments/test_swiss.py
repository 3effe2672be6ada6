"""A Swiss of four built-in bots on a real server runs to its end by itself; its standings
are those ``python -m app.table.standings`` recomputes from its export."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.api.helpers import new_player
from tests.tournaments.helpers import SHORT, create, enter_bots, finished, pairs_of, recompute

LEVELS = ["easy", "medium", "easy", "medium"]


async def test_a_swiss_of_four_bots_runs_to_its_end(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    organiser = await new_player(client, "Org")
    t = await create(client, organiser, format="swiss", rounds=3, rules=SHORT, admits="bots")
    tid = t["tournament_id"]
    await enter_bots(client, organiser, tid, LEVELS)
    r = await client.post(f"/v1/tournaments/{tid}/start", headers=organiser.auth)
    assert r.status_code == 200, r.text

    done = await finished(client, tid)

    rounds = done["rounds"]
    assert [r["number"] for r in rounds] == [1, 2, 3]
    for round_ in rounds:
        assert len(round_["pairings"]) == 2
        seen = [e for p in round_["pairings"] for e in (p["seat0"], p["seat1"])]
        assert sorted(seen) == sorted(e["id"] for e in done["entrants"])  # everyone once
        for p in round_["pairings"]:
            assert p["status"] == "finished"
            assert p["winner"] in (p["seat0"], p["seat1"])
            assert p["record_id"] == f"{p['table_id']}-1"
    pairs = pairs_of(done)
    assert len(pairs) == len(set(pairs)) == 6  # no pair repeated: everyone met everyone
    tables = {p["table_id"] for r in rounds for p in r["pairings"]}
    assert len(tables) == 6  # every pairing played once, at a table of its own
    for table_id in tables:
        table = (await client.get(f"/v1/tables/{table_id}")).json()
        assert table["match_number"] == 1
    scores = sorted(s["score"] for s in done["standings"])
    assert sum(scores) == 6

    export = (await client.get(f"/v1/tournaments/{tid}/export")).json()
    assert recompute(export, tmp_path) == done["standings"]
    assert [s["buchholz"] for s in done["standings"]] == [
        s["buchholz"] for s in recompute(export, tmp_path)
    ]
