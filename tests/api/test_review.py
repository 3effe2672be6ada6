"""A finished hand's replay and its review by LUNA over HTTP: refused while the hand is
played, then every decision of each seat with its options, kept once computed; a match's
summary; the queue's bound."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.conftest import start_server
from tests.api.helpers import (
    Player,
    get_table,
    mover,
    new_player,
    play_until,
    seated_table,
    step,
)
from tests.api.test_observability import samples, value
from tests.waiting import until


async def _review(client: httpx.AsyncClient, table_id: str, hand: int = 1) -> dict[str, Any]:
    """The hand's review once computed (a 202 pending is asked again)."""

    async def done() -> dict[str, Any] | None:
        r = await client.get(f"/v1/tables/{table_id}/hands/{hand}/review")
        assert r.status_code in (200, 202), r.text
        body: dict[str, Any] = r.json()
        return body if r.status_code == 200 else None

    result: dict[str, Any] = await until(done, timeout=60, every=0.5, what="the review")
    return result


async def test_a_hand_is_reviewed_only_once_it_is_over(client: httpx.AsyncClient) -> None:
    table_id, players = await seated_table(client)
    await step(client, table_id, players)
    r = await client.get(f"/v1/tables/{table_id}/hands/1/review")
    assert r.status_code == 409 and r.json()["code"] == "hand_not_finished"
    await play_until(client, table_id, players, done="hand")

    replay = (await client.get(f"/v1/tables/{table_id}/hands/1")).json()
    steps = replay["steps"]
    assert steps and steps[-1]["action"]["kind"] in ("knock", "discard", "big_gin")
    for s in steps:
        assert len(s["hands"]) == 2 and isinstance(s["discard_pile"], list)
    moves = [e for e in replay["events"] if e["type"] in ("upcard_passed", "drew_stock",
             "drew_discard", "upcard_taken", "discarded", "knocked", "big_gin")]  # fmt: skip
    assert [s["seq"] for s in steps] == [e["seq"] for e in moves]

    before = await samples(client)
    review = await _review(client, table_id)
    assert review["status"] == "done" and review["hand_number"] == 1
    after = await samples(client)
    # Counted with what it cost (the session's server is shared: at least this one).
    assert value(after, "ginrummy_reviews_total") - value(before, "ginrummy_reviews_total") >= 1
    assert value(after, "ginrummy_review_cpu_seconds_total") > value(
        before, "ginrummy_review_cpu_seconds_total"
    )
    decisions = review["decisions"]
    assert [d["index"] for d in decisions] == [s["index"] for s in steps]
    assert {d["seat"] for d in decisions} == {0, 1}
    judged = [d for d in decisions if not d["forced"]]
    assert judged
    for d, s in zip(decisions, steps, strict=True):
        played = {k: v for k, v in s["action"].items() if v is not None}
        assert d["seat"] == s["seat"] and d["chosen"] == played
    for d in judged:
        assert len(d["options"]) >= 2
        assert d["chosen"] in [{k: v for k, v in o.items() if k != "points"} for o in d["options"]]
        assert d["cost"] >= 0 and d["mark"] in (None, "inaccuracy", "mistake", "blunder")
    assert [s["seat"] for s in review["seats"]] == [0, 1]
    # Kept: asked again, the same review, at once.
    again = await client.get(f"/v1/tables/{table_id}/hands/1/review")
    assert again.status_code == 200 and again.json() == review

    summary = (await client.get(f"/v1/tables/{table_id}/matches/1/review")).json()
    assert summary["hands"] == [{"hand_number": 1, "status": "done", "seats": review["seats"]}]
    assert summary["status"] == "done"
    assert [s["decisions"] for s in summary["seats"]] == [s["decisions"] for s in review["seats"]]


async def test_reviews_refuse_unknown_hands_and_matches(client: httpx.AsyncClient) -> None:
    table_id, _ = await seated_table(client)
    r = await client.get(f"/v1/tables/{table_id}/hands/9/review")
    assert r.status_code == 404 and r.json()["code"] == "hand_not_found"
    r = await client.get("/v1/tables/nope/hands/1/review")
    assert r.status_code == 404 and r.json()["code"] == "table_not_found"
    r = await client.get(f"/v1/tables/{table_id}/matches/4/review")
    assert r.status_code == 404 and r.json()["code"] == "match_not_found"
    r = await client.get(f"/v1/tables/{table_id}/hands/0/review")
    assert r.status_code == 422


async def test_a_full_queue_refuses_and_a_slow_review_is_pending(module_db: str) -> None:
    server = start_server(
        module_db, review_queue_max=1, review_wait_seconds=0.0, review_samples=400
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            tables: list[tuple[str, list[Player]]] = []
            for _ in range(2):
                table_id, players = await seated_table(client)
                await play_until(client, table_id, players, done="hand")
                tables.append((table_id, players))
            first = await client.get(f"/v1/tables/{tables[0][0]}/hands/1/review")
            assert first.status_code == 202 and first.json()["status"] == "pending"
            assert first.headers["retry-after"]
            second = await client.get(f"/v1/tables/{tables[1][0]}/hands/1/review")
            assert second.status_code == 429 and second.json()["code"] == "review_queue_full"
            assert second.headers["retry-after"]
            done = await _review(client, tables[0][0])
            assert done["budget"]["samples"] == 400
    finally:
        server.stop()


async def test_hints_only_where_the_table_allows_them(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/v1/tables", json={"rated": True, "hints": True}, headers=(await new_player(client)).auth
    )
    assert r.status_code == 422 and r.json()["code"] == "hints_on_rated"
    plain, players = await seated_table(client)
    r = await client.get(f"/v1/tables/{plain}/hint", headers=players[0].auth)
    assert r.status_code == 409 and r.json()["code"] == "hints_off"

    table_id, players = await seated_table(client, hints=True)
    views = [await get_table(client, table_id, p) for p in players]
    assert [v["hints"] for v in views] == [True, True] and not views[0]["rated"]
    for _ in range(3):  # the upcard offer, a draw, a discard
        view = await get_table(client, table_id, players[0])
        seat = mover(view)
        waiting = await client.get(f"/v1/tables/{table_id}/hint", headers=players[1 - seat].auth)
        assert waiting.status_code == 409 and waiting.json()["code"] == "not_your_turn"
        r = await client.get(f"/v1/tables/{table_id}/hint", headers=players[seat].auth)
        assert r.status_code == 200, r.text
        hint = r.json()
        mine = await get_table(client, table_id, players[seat])
        legal = mine["game"]["legal"]
        assert hint["seat"] == seat and hint["version"] == mine["version"]
        move = hint["move"]
        assert move["kind"] in legal["actions"]
        if move["kind"] == "discard":
            assert move["card"] in legal["discards"]
        await step(client, table_id, players)
    r = await client.get(f"/v1/tables/{table_id}/hint")
    assert r.status_code == 401
