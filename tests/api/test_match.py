"""Whole matches over HTTP: to 100 points, by resignation; history and the fair shuffle."""

from __future__ import annotations

import httpx

from app.engine.cards import codes, commitment, shuffled_deck
from tests.api.helpers import (
    JSON,
    get_table,
    new_player,
    new_table,
    play_until,
    rematch,
    seated_table,
    step,
)


async def test_full_match_to_100_then_history_and_every_hand_redeals(
    client: httpx.AsyncClient,
) -> None:
    table_id, players = await seated_table(client)
    final = await play_until(client, table_id, players)
    match = final["game"]["match"]
    assert match["status"] == "finished" and match["finish_reason"] == "target"
    winner = match["winner"]
    assert match["scores"][winner] >= 100
    assert final["status"] == "finished"

    for seat, player in enumerate(players):
        r = await client.get("/v1/players/me/matches", headers=player.auth)
        assert r.status_code == 200
        [record] = r.json()
        assert record["table_id"] == table_id and record["reason"] == "target"
        assert record["result"] == ("win" if seat == winner else "loss")
        assert record["opponent"]["id"] == players[1 - seat].id
        assert record["opponent_bot"] is None
        assert record["scores"] == {
            "you": match["scores"][seat],
            "opponent": match["scores"][1 - seat],
        }

    hands = [h["hand_number"] for h in match["history"]]
    assert hands == list(range(1, len(hands) + 1))
    for number in hands:
        r = await client.get(f"/v1/tables/{table_id}/hands/{number}")
        assert r.status_code == 200, r.text
        hand = r.json()
        assert commitment(hand["seed"], hand["nonce"]) == hand["commitment"]
        deck = codes(shuffled_deck(hand["seed"]))
        leader = 1 - hand["dealer"]
        deal = hand["deal"]
        assert sorted(deal["hands"][leader]) == sorted(deck[0:20:2])
        assert sorted(deal["hands"][1 - leader]) == sorted(deck[1:20:2])
        assert deal["upcard"] == deck[20]
        assert deal["stock"] == deck[21:]
        assert hand["events"][0]["type"] == "hand_started"
        assert hand["events"][-1]["type"] in ("hand_over", "match_over")
        assert hand["result"]["hand_number"] == number


async def test_resign_ends_the_match_and_counts_for_both(client: httpx.AsyncClient) -> None:
    table_id, (p0, p1) = await seated_table(client)
    await step(client, table_id, [p0, p1])
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=p1.auth)
    assert r.status_code == 200, r.text
    types = [e["type"] for e in r.json()["events"]]
    assert types == ["resigned", "match_over"]
    view = r.json()["table"]
    assert view["status"] == "finished"
    assert view["game"]["match"]["winner"] == 0
    assert view["game"]["match"]["finish_reason"] == "resignation"

    mine = (await client.get("/v1/players/me/matches", headers=p0.auth)).json()
    theirs = (await client.get("/v1/players/me/matches", headers=p1.auth)).json()
    assert [(m["result"], m["reason"]) for m in mine] == [("win", "resignation")]
    assert [(m["result"], m["reason"]) for m in theirs] == [("loss", "resignation")]

    # The interrupted hand opens once the match is over, seed included.
    hand = (await client.get(f"/v1/tables/{table_id}/hands/1")).json()
    assert hand["ended_by"] == "resignation" and hand["commitment_valid"]


async def test_abandoned_match_counts_for_no_one(client: httpx.AsyncClient) -> None:
    table_id, (p0, p1) = await seated_table(client)
    await step(client, table_id, [p0, p1])
    for player in (p0, p1):
        r = await client.get("/v1/players/me/matches", headers=player.auth)
        assert r.json() == []
    loner = await new_player(client)
    await new_table(client, loner)
    assert (await client.get("/v1/players/me/matches", headers=loner.auth)).json() == []
    assert (await get_table(client, table_id, None))["status"] == "playing"


async def test_history_pages_by_before_and_refuses_a_match_not_yours(
    client: httpx.AsyncClient,
) -> None:
    table_id, (p0, p1) = await seated_table(client)
    for match in range(7):
        if match:
            await rematch(client, table_id, p0, p1)
        r = await client.post(f"/v1/tables/{table_id}/resign", headers=(p0, p1)[match % 2].auth)
        assert r.status_code == 200, r.text

    whole = (await client.get("/v1/players/me/matches", headers=p0.auth)).json()
    assert [m["match_number"] for m in whole] == list(range(7, 0, -1))
    pages: list[list[JSON]] = []
    before: str | None = None
    while not pages or len(pages[-1]) == 3:
        params = {"limit": 3} | ({} if before is None else {"before": before})
        r = await client.get("/v1/players/me/matches", headers=p0.auth, params=params)
        assert r.status_code == 200, r.text
        pages.append(r.json())
        before = pages[-1][-1]["match_id"] if pages[-1] else None
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [m for p in pages for m in p] == whole
    # The seat on the other side pages the same matches from its own side.
    last = (
        await client.get(
            "/v1/players/me/matches",
            headers=p1.auth,
            params={"limit": 2, "before": whole[4]["match_id"]},
        )
    ).json()
    assert [(m["match_number"], m["result"]) for m in last] == [(2, "loss"), (1, "win")]

    stranger = await new_player(client)
    for bad in (whole[0]["match_id"], "nope-1", f"{table_id}-99", "\x00-1", "x"):
        r = await client.get(
            "/v1/players/me/matches", headers=stranger.auth, params={"before": bad}
        )
        assert (r.status_code, r.json()["code"]) == (404, "match_not_found"), bad
    for query in ("limit=0", "limit=101", f"before={'x' * 81}"):
        r = await client.get(f"/v1/players/me/matches?{query}", headers=p0.auth)
        assert r.status_code == 422, query
    assert (await client.get("/v1/players/me/matches", headers=p0.auth)).json() == whole
