"""No secret in a log: every line real server processes write (the JSON access log and the
app's own logs, at DEBUG) during a whole match — HTTP and WebSocket, error paths included —
holds none of the tokens, socket tickets and Idempotency-Keys that match used.

SQLite and PostgreSQL; two processes on one Redis for PostgreSQL (a ticket issued by one is
redeemed by the other)."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.api.conftest import pg_database
from tests.api.helpers import JSON, Player, new_player, play_until
from tests.api.processes import Process, processes


def _ws(url: str, path: str) -> str:
    return url.replace("http", "ws", 1) + path


async def _first(url: str, path: str, headers: dict[str, str] | None = None) -> JSON:
    async with connect(_ws(url, path), additional_headers=headers) as ws:
        message: JSON = json.loads(await asyncio.wait_for(ws.recv(), 30))
        return message


async def _match(a: str, b: str, secrets: list[str]) -> None:
    """A whole match on ``a`` (sockets also on ``b``), every secret it uses added to
    ``secrets``, through the error paths too."""
    async with httpx.AsyncClient(base_url=a, timeout=60) as client:
        p0, p1 = await new_player(client, "Ada"), await new_player(client, "Bo")
        secrets += [p0.token, p1.token]
        r = await client.post("/v1/tables", json={"rules": {"target": 1}}, headers=p0.auth)
        table = r.json()
        tid = table["table_id"]
        await client.post(f"/v1/invites/{table['invite_code']}", headers=p1.auth)
        key = f"idem-{uuid.uuid4().hex}"
        secrets.append(key)
        r = await client.post(
            f"/v1/tables/{tid}/start", json={}, headers={**p0.auth, "Idempotency-Key": key}
        )
        assert r.status_code == 200, r.text

        # Sockets: by ticket (redeemed on the other process), by ?token=, by Bearer header.
        r = await client.post("/v1/ws-tickets", headers=p1.auth)
        ticket = r.json()["ticket"]
        secrets.append(ticket)
        assert (await _first(b, f"/v1/tables/{tid}/ws?ticket={ticket}"))["type"] == "view"
        # Error paths: the ticket again, a bad ticket, a bad token in the query and header.
        assert (await _first(b, f"/v1/tables/{tid}/ws?ticket={ticket}"))["code"] == (
            "invalid_ticket"
        )
        bad = f"bad-{uuid.uuid4().hex}"
        secrets.append(bad)
        assert (await _first(b, f"/v1/players/me/ws?ticket={bad}"))["code"] == "invalid_ticket"
        assert (await _first(a, f"/v1/tables/{tid}/ws?token={bad}"))["code"] == "unauthorized"
        header = {"Authorization": f"Bearer {bad}"}
        assert (await _first(a, "/v1/players/me/ws", header))["code"] == "unauthorized"
        assert (await _first(a, f"/v1/tables/{tid}/ws?since=0&token={p0.token}"))["type"]
        assert (await client.get("/v1/players/me", headers=header)).status_code == 401

        # A move refused over the socket, one over HTTP, and a 422 echoing the body.
        async with connect(_ws(b, f"/v1/tables/{tid}/ws?token={p1.token}")) as ws:
            await ws.recv()
            view = (await client.get(f"/v1/tables/{tid}", headers=p0.auth)).json()
            idle = p1 if view["game"]["hand"]["turn"] == 0 else p0
            await ws.send(json.dumps({"type": "move", "id": "x", "kind": "knock", "card": "AS"}))
            while json.loads(await ws.recv())["type"] != "error":
                pass
        key = f"idem-{uuid.uuid4().hex}"
        secrets.append(key)
        r = await client.post(
            f"/v1/tables/{tid}/moves/draw",
            json={"source": "stock"},
            headers={**idle.auth, "Idempotency-Key": key},
        )
        assert r.status_code in (409, 422), r.text
        echoed = f"echo-{uuid.uuid4().hex}"
        secrets.append(echoed)
        r = await client.post(
            f"/v1/tables/{tid}/moves/discard",
            json={"card": echoed, echoed: p0.token},
            headers={**p0.auth, "Idempotency-Key": echoed},
        )
        assert r.status_code == 422, r.text

        # Rotate and revoke mid-match, then play the match out with the new token.
        r = await client.post("/v1/players/me/tokens/rotate", headers=p0.auth)
        fresh = Player(p0.id, p0.name, r.json()["token"])
        secrets.append(fresh.token)
        assert (await client.get("/v1/players/me", headers=p0.auth)).status_code == 401
        view = await play_until(client, tid, [fresh, p1])
        assert view["game"]["match"]["status"] == "finished"


def _check(logs: list[Process], secrets: list[str]) -> None:
    lines = [line for p in logs for line in p.lines()]
    assert any('"websocket"' in line for line in lines), "no access log line was written"
    leaks = [(s, line) for line in lines for s in secrets if s in line]
    assert not leaks, leaks[:3]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_no_token_ticket_or_key_in_any_log_line(tmp_path: Path, backend: str) -> None:
    env = {"LOG_FORMAT": "json", "LOG_LEVEL": "DEBUG"}
    secrets: list[str] = []
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
        with processes(tmp_path, 1, DATABASE_URL=url, **env) as (a,):
            asyncio.run(_match(a.url, a.url, secrets))
        _check([a], secrets)
        return
    with (
        pg_database("ginrummy_logs") as url,
        processes(
            tmp_path,
            2,
            DATABASE_URL=url,
            REDIS_URL="redis://127.0.0.1:6379/0",
            REDIS_PREFIX=f"test-{uuid.uuid4().hex}",
            **env,
        ) as (a, b),
    ):
        asyncio.run(_match(a.url, b.url, secrets))
    _check([a, b], secrets)
