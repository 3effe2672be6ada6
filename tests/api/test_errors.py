"""Every error class: its status, its ``{code, message}`` body, and an untouched table."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.conftest import sqlite_only
from tests.api.helpers import JSON, Player, get_table, new_player, new_table, seated_table


async def _refused(
    client: httpx.AsyncClient,
    table_id: str,
    who: Player,
    method: str,
    path: str,
    *,
    expect: tuple[int, str],
    body: Any = None,
    content: bytes | None = None,
) -> JSON:
    """Send a request that must fail with ``expect`` (status, code), leaving the table as it was."""
    status, code = expect
    before = await get_table(client, table_id, who)
    headers = dict(who.auth)
    if content is not None:
        headers["Content-Type"] = "application/json"
    r = await client.request(method, path, json=body, content=content, headers=headers)
    assert r.status_code == status, r.text
    error: JSON = r.json()
    assert error["code"] == code and error["message"], error
    assert await get_table(client, table_id, who) == before
    return error


@sqlite_only
async def test_401_missing_or_bad_token(client: httpx.AsyncClient) -> None:
    table_id, (p0, _) = await seated_table(client)
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic eDp5"}):
        for method, path in (
            ("GET", "/v1/players/me"),
            ("POST", "/v1/tables"),
            ("POST", f"/v1/tables/{table_id}/resign"),
        ):
            r = await client.request(method, path, headers=headers, json={})
            assert r.status_code == 401, (method, path, r.text)
            assert r.json()["code"] == "unauthorized"
    # A token is optional to watch, but a bad one is still refused.
    r = await client.get(f"/v1/tables/{table_id}", headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401
    assert (await get_table(client, table_id, p0))["game"]["match"]["status"] == "playing"


@sqlite_only
async def test_403_not_your_seat(client: httpx.AsyncClient) -> None:
    table_id, (p0, p1) = await seated_table(client, start=False)
    stranger = await new_player(client)
    await _refused(
        client, table_id, p1, "POST", f"/v1/tables/{table_id}/start", expect=(403, "not_creator")
    )
    await _refused(
        client,
        table_id,
        stranger,
        "POST",
        f"/v1/tables/{table_id}/start",
        expect=(403, "not_seated"),
    )
    await client.post(f"/v1/tables/{table_id}/start", headers=p0.auth)
    for path, body in (
        ("moves/pass", None),
        ("moves/draw", {"source": "stock"}),
        ("resign", None),
        ("next-hand", None),
    ):
        await _refused(
            client,
            table_id,
            stranger,
            "POST",
            f"/v1/tables/{table_id}/{path}",
            expect=(403, "not_seated"),
            body=body,
        )
    await _refused(
        client,
        table_id,
        stranger,
        "PUT",
        f"/v1/tables/{table_id}/deck",
        expect=(403, "not_seated"),
        body={"design": "neon"},
    )


async def test_404_unknown_table_invite_hand_route(client: httpx.AsyncClient) -> None:
    player = await new_player(client)
    for method, path in (
        ("GET", "/v1/tables/nope"),
        ("POST", "/v1/tables/nope/resign"),
        ("POST", "/v1/tables/nope/moves/pass"),
        ("GET", "/v1/tables/nope/hands/1"),
        ("GET", "/v1/tables/nope/events"),
    ):
        r = await client.request(method, path, headers=player.auth)
        assert r.status_code == 404 and r.json()["code"] == "table_not_found", (path, r.text)
    r = await client.post("/v1/invites/nope", headers=player.auth)
    assert r.status_code == 404 and r.json()["code"] == "invite_not_found"
    table_id, _ = await seated_table(client)
    r = await client.get(f"/v1/tables/{table_id}/hands/7")
    assert r.status_code == 404 and r.json()["code"] == "hand_not_found"
    r = await client.get("/v1/no/such/route")
    assert r.status_code == 404 and r.json()["code"] == "not_found"


async def test_409_rules_and_table_state_say_no(client: httpx.AsyncClient) -> None:
    p0 = await new_player(client)
    table = await new_table(client, p0)
    table_id = table["table_id"]
    await _refused(
        client,
        table_id,
        p0,
        "POST",
        f"/v1/tables/{table_id}/start",
        expect=(409, "waiting_for_opponent"),
    )
    await _refused(
        client,
        table_id,
        p0,
        "POST",
        f"/v1/tables/{table_id}/moves/pass",
        expect=(409, "match_not_started"),
    )
    await _refused(
        client,
        table_id,
        p0,
        "POST",
        f"/v1/invites/{table['invite_code']}",
        expect=(409, "already_seated"),
    )

    table_id, players = await seated_table(client, rules={"upcard_offer": False})
    view = await get_table(client, table_id, players[0])
    turn = view["game"]["hand"]["turn"]
    mover, waiter = players[turn], players[1 - turn]
    base = f"/v1/tables/{table_id}"
    await _refused(
        client,
        table_id,
        waiter,
        "POST",
        f"{base}/moves/draw",
        expect=(409, "not_your_turn"),
        body={"source": "stock"},
    )
    await _refused(
        client,
        table_id,
        mover,
        "POST",
        f"{base}/moves/discard",
        expect=(409, "wrong_phase"),
        body={"card": "AS"},
    )
    await _refused(
        client, table_id, mover, "POST", f"{base}/next-hand", expect=(409, "wrong_phase")
    )
    await _refused(
        client, table_id, players[0], "POST", f"{base}/start", expect=(409, "match_already_started")
    )
    r = await client.post(f"{base}/moves/draw", json={"source": "discard"}, headers=mover.auth)
    assert r.status_code == 200
    taken = r.json()["events"][0]["card"]
    await _refused(
        client,
        table_id,
        mover,
        "POST",
        f"{base}/moves/discard",
        expect=(409, "cannot_discard_drawn_card"),
        body={"card": taken},
    )
    mine = set(r.json()["table"]["game"]["hand"]["yours"]["cards"])
    theirs = next(c for c in ("AS", "2S", "3S", "4S", "5S") if c not in mine)
    error = await _refused(
        client,
        table_id,
        mover,
        "POST",
        f"{base}/moves/discard",
        expect=(409, "card_not_in_hand"),
        body={"card": theirs},
    )
    assert theirs in error["message"]
    deadwood = r.json()["table"]["game"]["hand"]["yours"]["deadwood"]
    if deadwood > 20:  # no single discard brings it to the knock limit
        await _refused(
            client,
            table_id,
            mover,
            "POST",
            f"{base}/moves/knock",
            expect=(409, "deadwood_too_high"),
            body={"card": r.json()["table"]["game"]["legal"]["discards"][0]},
        )


@sqlite_only
async def test_422_malformed_bodies(client: httpx.AsyncClient) -> None:
    table_id, (p0, _) = await seated_table(client)
    base = f"/v1/tables/{table_id}"
    cases: list[tuple[str, str, Any, bytes | None]] = [
        ("POST", f"{base}/moves/discard", None, b"{not json"),
        ("POST", f"{base}/moves/discard", {}, None),
        ("POST", f"{base}/moves/discard", {"card": "ZZ"}, None),
        ("POST", f"{base}/moves/discard", {"card": 17}, None),
        ("POST", f"{base}/moves/knock", {"card": "AS", "extra": 1}, None),
        ("POST", f"{base}/moves/draw", {"source": "sky"}, None),
        ("POST", f"{base}/moves/pass", {"expected_version": -1}, None),
        ("POST", f"{base}/moves/pass", [1, 2], None),
        ("PUT", f"{base}/deck", {"design": "paisley"}, None),
        ("POST", f"{base}/chat", {"text": 5}, None),
    ]
    for method, path, body, content in cases:
        error = await _refused(
            client,
            table_id,
            p0,
            method,
            path,
            expect=(422, "invalid_request"),
            body=body,
            content=content,
        )
        assert error["details"], error
    r = await client.post("/v1/players", json={"name": "   "})
    assert r.status_code == 422
    for body, code in (
        ({"preset": "poker"}, "unknown_preset"),
        ({"rules": {"knock_limit": 99}}, "invalid_ruleset"),
        ({"rules": {"jokers": True}}, "invalid_ruleset"),
    ):
        r = await client.post("/v1/tables", json=body, headers=p0.auth)
        assert r.status_code == 422 and r.json()["code"] == code, r.text
    r = await client.post(f"{base}/moves/pass", headers={**p0.auth, "Idempotency-Key": "k" * 201})
    assert r.status_code == 422 and r.json()["code"] == "invalid_idempotency_key"


async def test_hostile_input_is_refused_never_a_500(client: httpx.AsyncClient) -> None:
    """Input the databases cannot hold (NUL, 64-bit numbers) or JSON cannot echo (NaN)."""
    table_id, (p0, _) = await seated_table(client)
    raw = {**p0.auth, "Content-Type": "application/json"}
    base = f"/v1/tables/{table_id}"
    cases: list[tuple[str, str, bytes | None, int]] = [
        ("POST", "/v1/players", b'{"name": "a\\u0000b"}', 422),
        ("POST", f"{base}/chat", b'{"text": "hi\\u0000"}', 422),
        ("POST", f"{base}/moves/discard", b'{"card": "\\u0000"}', 422),
        ("POST", f"{base}/moves/pass", b'{"expected_version": NaN}', 422),
        ("POST", f"{base}/moves/pass", b'{"expected_version": 1e400}', 422),
        ("POST", f"{base}/moves/pass", b'{"expected_version": 99999999999999999999}', 422),
        ("POST", "/v1/tables", b'{"rules": {"target": NaN}}', 422),
        ("POST", "/v1/tables", b'{"rules": {"target": 99999999999999999999}}', 422),
        ("GET", f"{base}/hands/99999999999999999999", None, 422),
        ("GET", f"{base}/events?since=99999999999999999999", None, 422),
        ("GET", "/v1/tables/%00", None, 404),
        ("GET", "/v1/tables/" + "x" * 3000, None, 404),
        ("POST", "/v1/invites/%00", None, 404),
    ]
    for method, path, content, status in cases:
        r = await client.request(method, path, content=content, headers=raw)
        assert r.status_code == status, (path, content, r.text)
        assert r.json()["code"] and r.json()["message"]
    assert (await client.get("/readyz")).status_code == 200


@sqlite_only
async def test_405_allow_lists_every_method_of_the_path(client: httpx.AsyncClient) -> None:
    table_id, _ = await seated_table(client)
    r = await client.options(f"/v1/tables/{table_id}/bot")
    assert r.status_code == 405 and r.json()["code"] == "method_not_allowed"
    assert r.headers["Allow"] == "DELETE, POST"
    r = await client.put(f"/v1/tables/{table_id}")
    assert r.status_code == 405 and r.headers["Allow"] == "GET"
