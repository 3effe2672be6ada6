"""A correspondence Swiss: a round whose deadline passes settles its unfinished match once (the
seat ahead wins; level, drawn) and the next round is paired once."""

from __future__ import annotations

import httpx

from tests.api.helpers import new_player
from tests.tournaments.helpers import SHORT, create, enter_bots, finished
from tests.waiting import until

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


async def test_a_late_join_plays_from_the_next_round_and_a_withdrawal_is_not_paired(
    client: httpx.AsyncClient,
) -> None:
    org, ada = await new_player(client, "Org"), await new_player(client, "Ada")
    t = await create(client, org, format="swiss", rounds=3, rules=SHORT, admits="both",
                     round_days=SECONDS / 86400)  # fmt: skip
    tid = t["tournament_id"]
    # The organiser plays too and never moves: each round lasts until its deadline.
    assert (await client.post(f"/v1/tournaments/{tid}/join", headers=org.auth)).is_success
    await enter_bots(client, org, tid, ["easy", "medium", "easy"])
    assert (await client.post(f"/v1/tournaments/{tid}/start", headers=org.auth)).is_success
    await until(lambda: _round(client, tid, 1), what="round 1")
    assert (await client.post(f"/v1/tournaments/{tid}/join", headers=ada.auth)).is_success
    await until(lambda: _round(client, tid, 2), what="round 2")
    assert (await client.post(f"/v1/tournaments/{tid}/withdraw", headers=ada.auth)).is_success

    done = await finished(client, tid, timeout=60)

    def entrants(number: int) -> set[str]:
        round_ = done["rounds"][number - 1]
        return {e for p in round_["pairings"] for e in (p["seat0"], p["seat1"]) if e}

    assert ada.id not in entrants(1)  # joined late
    assert ada.id in entrants(2)  # paired from the next round
    assert ada.id not in entrants(3)  # withdrawn
    byes = [r["number"] for r in done["rounds"] for p in r["pairings"] if p["status"] == "bye"]
    assert byes == [2]  # five entrants in round 2 only


async def _round(client: httpx.AsyncClient, tid: str, number: int) -> bool:
    view = (await client.get(f"/v1/tournaments/{tid}")).json()
    return bool(view["round"] >= number)
