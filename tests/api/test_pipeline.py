"""The command pipeline under races and retries: once means once, on both databases."""

from __future__ import annotations

import asyncio

import httpx

from tests.api.conftest import Server, start_server
from tests.api.helpers import JSON, Player, choose, get_table, mover, new_player, seated_table


async def _next_move(
    client: httpx.AsyncClient, table_id: str, players: list[Player]
) -> tuple[Player, str, JSON | None]:
    view = await get_table(client, table_id, players[0])
    seat = mover(view)
    path, body = choose(await get_table(client, table_id, players[seat]))
    return players[seat], f"/v1/tables/{table_id}/{path}", body


async def _log_types(client: httpx.AsyncClient, table_id: str) -> list[str]:
    return [e["type"] for e in (await client.get(f"/v1/tables/{table_id}/events")).json()]


async def test_simultaneous_duplicates_apply_once(client: httpx.AsyncClient) -> None:
    table_id, players = await seated_table(client)
    for _ in range(6):
        who, path, body = await _next_move(client, table_id, players)
        before = await get_table(client, table_id, who)
        log_before = await _log_types(client, table_id)
        responses = await asyncio.gather(
            *(client.post(path, json=body, headers=who.auth) for _ in range(4))
        )
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [200, 409, 409, 409], [r.text for r in responses]
        for r in responses:
            if r.status_code == 409:
                assert r.json()["code"] in ("not_your_turn", "wrong_phase")
        after = await get_table(client, table_id, who)
        applied = next(r for r in responses if r.status_code == 200).json()
        assert after["version"] == before["version"] + 1
        assert await _log_types(client, table_id) == log_before + [
            e["type"] for e in applied["events"]
        ]


async def test_two_app_instances_on_one_database_apply_a_move_once(
    client: httpx.AsyncClient,
    server: Server,
) -> None:
    """No shared in-process lock: only the version-guarded UPDATE stands between them."""
    other = start_server(server.settings.database_url)
    try:
        async with httpx.AsyncClient(base_url=other.url, timeout=30) as second:
            table_id, players = await seated_table(client)
            for _ in range(6):
                who, path, body = await _next_move(client, table_id, players)
                before = await get_table(client, table_id, who)
                responses = await asyncio.gather(
                    client.post(path, json=body, headers=who.auth),
                    second.post(path, json=body, headers=who.auth),
                )
                assert sorted(r.status_code for r in responses) == [200, 409], [
                    r.text for r in responses
                ]
                after = await get_table(client, table_id, who)
                assert after["version"] == before["version"] + 1
            seqs = [e["seq"] for e in (await client.get(f"/v1/tables/{table_id}/events")).json()]
            assert seqs == list(range(1, len(seqs) + 1))
    finally:
        other.stop()


async def test_idempotent_retry_returns_the_first_response(client: httpx.AsyncClient) -> None:
    table_id, players = await seated_table(client)
    who, path, body = await _next_move(client, table_id, players)
    headers = {**who.auth, "Idempotency-Key": "move-1"}
    first = await client.post(path, json=body, headers=headers)
    assert first.status_code == 200 and "Idempotency-Replayed" not in first.headers
    log = await _log_types(client, table_id)
    for _ in range(2):
        again = await client.post(path, json=body, headers=headers)
        assert again.status_code == 200 and again.json() == first.json()
        assert again.headers["Idempotency-Replayed"] == "true"
    assert await _log_types(client, table_id) == log

    # Concurrent retries of a new key: one applies, every answer is that one response.
    who, path, body = await _next_move(client, table_id, players)
    headers = {**who.auth, "Idempotency-Key": "move-2"}
    responses = await asyncio.gather(
        *(client.post(path, json=body, headers=headers) for _ in range(3))
    )
    assert {r.status_code for r in responses} == {200}
    assert len({r.text for r in responses}) == 1
    assert len(await _log_types(client, table_id)) == len(log) + len(responses[0].json()["events"])

    # The same key for a different request is refused; keys are per player.
    r = await client.post(f"/v1/tables/{table_id}/chat", json={"text": "hi"}, headers=headers)
    assert r.status_code == 409 and r.json()["code"] == "idempotency_key_reused"
    other = players[1] if who is players[0] else players[0]
    r = await client.post(
        f"/v1/tables/{table_id}/chat",
        json={"text": "hi"},
        headers={**other.auth, "Idempotency-Key": "move-2"},
    )
    assert r.status_code == 200


async def test_idempotent_table_creation_creates_one_table(client: httpx.AsyncClient) -> None:
    player = await new_player(client)
    headers = {**player.auth, "Idempotency-Key": "new-table"}
    responses = await asyncio.gather(
        *(client.post("/v1/tables", json={"preset": "reino"}, headers=headers) for _ in range(3))
    )
    assert {r.status_code for r in responses} == {201}
    assert len({r.json()["table_id"] for r in responses}) == 1
    again = await client.post("/v1/tables", json={"preset": "reino"}, headers=headers)
    assert again.json() == responses[0].json()
    assert again.headers["Idempotency-Replayed"] == "true"
    r = await client.post("/v1/tables", json={"preset": "classic"}, headers=headers)
    assert r.status_code == 409 and r.json()["code"] == "idempotency_key_reused"


async def test_stale_expected_version_is_refused(client: httpx.AsyncClient) -> None:
    table_id, players = await seated_table(client)
    who, path, body = await _next_move(client, table_id, players)
    version = (await get_table(client, table_id, who))["version"]
    r = await client.post(
        path, json={**(body or {}), "expected_version": version - 1}, headers=who.auth
    )
    assert r.status_code == 409 and r.json()["code"] == "stale_version"
    assert (await get_table(client, table_id, who))["version"] == version
    r = await client.post(
        path, json={**(body or {}), "expected_version": version}, headers=who.auth
    )
    assert r.status_code == 200 and r.json()["version"] == version + 1
    # Chat is not game state: it leaves the version alone, so a pinned move still goes through.
    await client.post(f"/v1/tables/{table_id}/chat", json={"text": "hm"}, headers=who.auth)
    who, path, body = await _next_move(client, table_id, players)
    r = await client.post(
        path, json={**(body or {}), "expected_version": version + 1}, headers=who.auth
    )
    assert r.status_code == 200, r.text
