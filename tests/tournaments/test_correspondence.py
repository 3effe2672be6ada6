"""A correspondence Swiss: a round whose deadline passes settles its unfinished match once (the
seat ahead wins; level, drawn) and the next round is paired once."""

from __future__ import annotations

import httpx

from tests.api.helpers import new_player
from tests.tournaments.helpers import SHORT, create, enter_bots, finished

SECONDS = 3.0


async def test_a_round_deadline_settles_an_unfinished_match_once(client: httpx.AsyncClient) -> None:
    org, ada = await new_player(client, "Org"), await new_player(client, "Ada")
    t = await create(client, org, format="swiss", rounds=2, rules=SHORT, admits="both",
                     round_days=SECONDS / 86400)  # fmt: skip
    tid = t["tournament_id"]
    assert (await client.post(f"/v1/tournaments/{tid}/join", headers=ada.auth)).is_success
    await enter_bots(client, org, tid, ["easy", "medium", "easy"])
    assert (await client.post(f"/v1/tournaments/{tid}/start", headers=org.auth)).is_success

    done = await finished(client, tid, timeout=60)  # Ada never moves

    assert [r["number"] for r in done["rounds"]] == [1, 2]
    for round_ in done["rounds"]:
        assert len(round_["pairings"]) == 2
        mine = next(p for p in round_["pairings"] if ada.id in (p["seat0"], p["seat1"]))
        table = (await client.get(f"/v1/tables/{mine['table_id']}")).json()
        scores = table["game"]["match"]["scores"]
        if scores[0] == scores[1]:
            assert (mine["status"], mine["winner"]) == ("drawn", None)
        else:
            ahead = mine["seat0"] if scores[0] > scores[1] else mine["seat1"]
            assert (mine["status"], mine["winner"]) == ("finished", ahead)
        assert table["game"]["match"]["status"] != "finished"  # settled by the deadline
    me = next(s for s in done["standings"] if s["entrant_id"] == ada.id)
    assert me["played"] == 2
