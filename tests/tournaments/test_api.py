"""Tournaments over HTTP: who may enter, the organiser's rights, and each refusal's code."""

from __future__ import annotations

import httpx

from tests.api.helpers import new_player
from tests.tournaments.helpers import SHORT, create


async def _refused(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["code"] == code


async def test_a_tournament_is_created_listed_entered_and_left(client: httpx.AsyncClient) -> None:
    ada, bo = await new_player(client, "Ada"), await new_player(client, "Bo")
    t = await create(client, ada, format="swiss", rounds=3, rules=SHORT, name="Friday Swiss")
    tid = t["tournament_id"]
    assert (t["status"], t["admits"], t["entrant_count"]) == ("upcoming", "humans", 0)
    listed = (await client.get("/v1/tournaments", params={"status": "upcoming"})).json()
    assert tid in [x["tournament_id"] for x in listed["tournaments"]]

    joined = (await client.post(f"/v1/tournaments/{tid}/join", headers=bo.auth)).json()
    assert joined["you"] == {"entrant_id": bo.id, "withdrawn": False}
    assert joined["entrant_count"] == 1
    await _refused(
        await client.post(f"/v1/tournaments/{tid}/join", headers=bo.auth), 409, "already_entered"
    )
    left = (await client.post(f"/v1/tournaments/{tid}/withdraw", headers=bo.auth)).json()
    assert left["you"]["withdrawn"] and left["entrant_count"] == 0
    await _refused(
        await client.post(f"/v1/tournaments/{tid}/withdraw", headers=ada.auth), 404, "not_entered"
    )
    # A human's tournament admits only humans unless its organiser chose otherwise.
    await _refused(
        await client.post(f"/v1/tournaments/{tid}/bots", json={"level": "easy"},
                          headers=ada.auth), 403, "bots_not_admitted",
    )  # fmt: skip
    await _refused(
        await client.post(f"/v1/tournaments/{tid}/start", headers=bo.auth), 403, "not_organiser"
    )
    await _refused(
        await client.post(f"/v1/tournaments/{tid}/start", headers=ada.auth), 409,
        "too_few_entrants",
    )  # fmt: skip
    await _refused(await client.get("/v1/tournaments/nope"), 404, "tournament_not_found")


async def test_bad_tournaments_are_refused_with_their_codes(client: httpx.AsyncClient) -> None:
    ada = await new_player(client, "Ada")
    cases = [
        ({"format": "arena"}, "invalid_tournament"),
        ({"format": "swiss"}, "invalid_tournament"),
        ({"format": "swiss", "rounds": 3, "duration": 600}, "invalid_tournament"),
        ({"format": "arena", "duration": 600, "rounds": 2}, "invalid_tournament"),
        ({"format": "swiss", "rounds": 99}, "invalid_tournament"),
        ({"format": "swiss", "rounds": 3, "starts_at": "2020-01-01T00:00:00Z"},
         "invalid_tournament"),
        ({"format": "swiss", "rounds": 3, "rated": True, "rules": SHORT}, "rated_overrides"),
        ({"format": "swiss", "rounds": 3, "preset": "nope"}, "unknown_preset"),
        ({"format": "knockout", "rounds": 3}, "invalid_request"),
    ]  # fmt: skip
    for body, code in cases:
        r = await client.post("/v1/tournaments", json=body, headers=ada.auth)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["code"] == code, (body, r.text)
    await _refused(await client.post("/v1/tournaments", json={"format": "swiss", "rounds": 1}),
                   401, "unauthorized")  # fmt: skip


async def test_bots_only_full_and_replayed(client: httpx.AsyncClient) -> None:
    ada, bo = await new_player(client, "Ada"), await new_player(client, "Bo")
    headers = {**ada.auth, "Idempotency-Key": "t-1"}
    body = {"format": "swiss", "rounds": 1, "admits": "bots", "capacity": 2}
    first = await client.post("/v1/tournaments", json=body, headers=headers)
    again = await client.post("/v1/tournaments", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotency-Replayed"] == "true"
    assert again.json()["tournament_id"] == first.json()["tournament_id"]
    tid = first.json()["tournament_id"]
    await _refused(
        await client.post(f"/v1/tournaments/{tid}/join", headers=bo.auth), 403,
        "humans_not_admitted",
    )  # fmt: skip
    for level in ("easy", "hard"):
        r = await client.post(f"/v1/tournaments/{tid}/bots", json={"level": level},
                              headers=ada.auth)  # fmt: skip
        assert r.status_code == 200, r.text
    await _refused(
        await client.post(f"/v1/tournaments/{tid}/bots", json={"level": "easy"},
                          headers=ada.auth), 409, "tournament_full",
    )  # fmt: skip
    await _refused(
        await client.post(f"/v1/tournaments/{tid}/bots", json={"level": "easy"},
                          headers=bo.auth), 403, "not_organiser",
    )  # fmt: skip


async def test_an_organiser_has_a_bounded_number_of_open_tournaments(
    client: httpx.AsyncClient,
) -> None:
    ada = await new_player(client, "Ada")
    for _ in range(5):  # TOURNAMENT_MAX_OPEN
        await create(client, ada, format="swiss", rounds=1)
    r = await client.post("/v1/tournaments", json={"format": "swiss", "rounds": 1},
                          headers=ada.auth)  # fmt: skip
    await _refused(r, 409, "too_many_tournaments")
