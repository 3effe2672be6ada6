"""Metrics, logs and health as an operator sees them: ``/metrics`` counts what a test did, the
JSON log of a real ``python -m app`` carries request ids and tables (never a token), and
``/readyz`` names the dependency that failed while ``/livez`` touches none."""

from __future__ import annotations

import asyncio
import gc
import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import orjson
import sqlalchemy as sa
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect

from tests.api.conftest import Server, _free_port, sqlite_only, start_server
from tests.api.helpers import seated_table, step
from tests.api.processes import start_process, stop
from tests.waiting import until

MOVES = "/v1/tables/{table_id}/moves/"


async def samples(client: httpx.AsyncClient) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of ``/metrics``: (name, labels) -> value."""
    r = await client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def value(metrics: dict[Any, float], name: str, **labels: str) -> float:
    return metrics.get((name, frozenset(labels.items())), 0.0)


def move_requests(metrics: dict[Any, float]) -> float:
    return sum(
        v
        for (name, labels), v in metrics.items()
        if name == "ginrummy_http_requests_total"
        and dict(labels)["route"].startswith(MOVES)
        and dict(labels)["status"] == "200"
    )


@sqlite_only
async def test_metrics_count_requests_and_move_commits(
    client: httpx.AsyncClient, server: Server
) -> None:
    table_id, players = await seated_table(client)
    before = await samples(client)
    await step(client, table_id, players)
    r = await client.get("/v1/tables/none")
    assert r.status_code == 404
    after = await samples(client)

    assert move_requests(after) - move_requests(before) == 1
    commits = "ginrummy_move_commit_seconds_count"
    # At least this move: the session's server is shared, and a table an earlier test left with
    # a clock that plays for absent seats (test_clocks.py's autoplay) may commit meanwhile.
    assert value(after, commits) - value(before, commits) >= 1
    labels = {"method": "GET", "route": "/v1/tables/{table_id}"}
    count = "ginrummy_http_requests_total"
    assert (
        value(after, count, **labels, status="404") - value(before, count, **labels, status="404")
        == 1
    )
    latency = "ginrummy_http_request_duration_seconds_count"
    assert value(after, latency, **labels) - value(before, latency, **labels) >= 2
    # The raw path never becomes a label.
    assert not any("none" in dict(labels).get("route", "") for _, labels in after)


@sqlite_only
async def test_garbage_collections_count_their_cpu(client: httpx.AsyncClient) -> None:
    """``ginrummy_gc_seconds_total`` (the server runs in this process) grows by at least most of
    what a collection of many young containers cost this thread."""
    name = "ginrummy_gc_seconds_total"
    before = value(await samples(client), name)
    garbage = [[i] for i in range(300_000)]
    started = time.thread_time()
    gc.collect()
    spent = time.thread_time() - started
    del garbage
    after = value(await samples(client), name)
    assert spent > 0.001
    assert after - before >= spent * 0.9


async def test_tables_in_play_are_counted_behind_the_scrape(tmp_path: Path) -> None:
    """The gauge is the database's count of tables in play, read at most once per
    ``METRICS_COUNT_MAX_AGE``: a scrape shows the last count at once and, when it is older,
    starts the next behind it; the scrapes in between issue no statement."""
    server = start_server(f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", metrics_count_max_age=1)
    counts: list[str] = []

    def count(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if "count(" in statement and "FROM tables WHERE tables.status = " in " ".join(
            statement.split()
        ):
            counts.append(statement)

    app = server.uvicorn.config.app
    assert isinstance(app, FastAPI)
    sa.event.listen(app.state.db.engine.sync_engine, "before_cursor_execute", count)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:

            async def in_play() -> float:
                return value(await samples(client), "ginrummy_tables_in_play")

            began = time.monotonic()  # the first count's age is at most the time since
            assert await in_play() == 0  # the first scrape waits for the first count
            await seated_table(client)
            while time.monotonic() - began < 0.9:
                assert await in_play() == 0  # the last count, less than a second old
            assert len(counts) == 1, counts

            # Older than a second: a scrape starts a count, and a scrape after it shows it.
            async def counted() -> bool:
                return await in_play() == 1

            await until(counted, what="the started table counted")
            assert len(counts) == 2, counts
    finally:
        server.stop()


@sqlite_only
async def test_open_sockets_gauge_follows_a_connection(
    client: httpx.AsyncClient, server: Server
) -> None:
    table_id, (p0, _) = await seated_table(client)
    gauge, route = "ginrummy_websockets_open", "/v1/tables/{table_id}/ws"
    before = value(await samples(client), gauge, route=route)
    url = server.url.replace("http://", "ws://") + f"/v1/tables/{table_id}/ws?token={p0.token}"
    async with connect(url, proxy=None) as ws:
        await ws.recv()
        assert value(await samples(client), gauge, route=route) == before + 1

    async def down() -> bool:
        return value(await samples(client), gauge, route=route) == before

    await until(down, what="the gauge to come down")


async def _poll_lines(log: Path, found: Any) -> list[dict[str, Any]]:
    """The log's lines, each parsed as JSON, once ``found(lines)`` holds (30 s at most)."""
    deadline = time.monotonic() + 30
    while True:
        lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        if found(lines) or time.monotonic() > deadline:
            return lines
        await asyncio.sleep(0.1)


async def test_json_logs_carry_request_ids_tables_and_seats_but_no_token(tmp_path: Path) -> None:
    server = start_process(
        tmp_path / "server.log",
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'logs.db'}",
        LOG_FORMAT="json",
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, players = await seated_table(client)
            rid = f"test-{uuid.uuid4().hex}"
            r = await client.get(
                f"/v1/tables/{table_id}", headers={**players[0].auth, "X-Request-ID": rid}
            )
            assert r.headers["x-request-id"] == rid
            r = await client.get("/v1/tables/none", headers={"X-Request-ID": "bad id\t!"})
            generated = r.headers["x-request-id"]
            assert generated != "bad id\t!"
            moved = await step(client, table_id, players)
            mover = moved["table"]["you"]
            ws_rid = f"ws-{uuid.uuid4().hex}"
            url = server.url.replace("http://", "ws://")
            url += f"/v1/tables/{table_id}/ws?since=0&token={players[1].token}"
            async with connect(url, proxy=None, additional_headers={"X-Request-ID": ws_rid}) as ws:
                assert ws.response is not None
                assert ws.response.headers["x-request-id"] == ws_rid
                first = orjson.loads(await asyncio.wait_for(ws.recv(), 30))
                assert first["type"] == "view"  # seq 0 is from before the match
                await ws.send(orjson.dumps({"type": "ping", "id": "1"}).decode())
                while orjson.loads(await asyncio.wait_for(ws.recv(), 30))["type"] != "pong":
                    pass
            # A spectator: served below ASGI once idle (app.api.live.parking), logged at its close.
            watch_rid = f"ws-{uuid.uuid4().hex}"
            url = server.url.replace("http://", "ws://") + f"/v1/tables/{table_id}/ws"
            async with connect(
                url, proxy=None, additional_headers={"X-Request-ID": watch_rid}
            ) as ws:
                assert orjson.loads(await asyncio.wait_for(ws.recv(), 30))["type"] == "view"
                await ws.send(orjson.dumps({"type": "ping", "id": "2"}).decode())
                assert orjson.loads(await asyncio.wait_for(ws.recv(), 30))["type"] == "pong"
        lines = await _poll_lines(
            server.log,
            lambda ls: sum(line["event"] == "websocket" for line in ls) >= 2,
        )
    finally:
        stop(server)
    access = [line for line in lines if line["logger"] == "ginrummy.access"]
    (read,) = [line for line in access if line.get("request_id") == rid]
    assert read["event"] == "request"
    assert read["route"] == "/v1/tables/{table_id}"
    assert read["table_id"] == table_id
    assert read["status"] == 200
    assert read["level"] == "info"
    assert read["duration_ms"] >= 0
    assert any(line.get("request_id") == generated for line in access)
    moves = [line for line in access if line["route"].startswith(MOVES)]
    assert [(m["table_id"], m["seat"], m["status"]) for m in moves] == [(table_id, mover, 200)]
    (session,) = [line for line in access if line.get("request_id") == ws_rid]
    assert session["event"] == "websocket"
    assert session["route"] == "/v1/tables/{table_id}/ws"
    assert session["table_id"] == table_id
    assert session["seat"] == 1
    assert session["messages_in"] == 1
    assert session["messages_out"] >= 2  # the view, the pong
    assert session["close_code"] == 1000
    assert session["path"] == f"/v1/tables/{table_id}/ws?since=0"
    (watched,) = [line for line in access if line.get("request_id") == watch_rid]
    assert watched["event"] == "websocket"
    assert watched["route"] == "/v1/tables/{table_id}/ws"
    assert watched["table_id"] == table_id
    assert watched["seat"] is None
    assert (watched["messages_in"], watched["messages_out"]) == (1, 2)  # ping; view, pong
    assert watched["close_code"] == 1000
    assert watched["path"] == f"/v1/tables/{table_id}/ws"
    text = server.log.read_text()
    for player in players:
        assert player.token not in text


@sqlite_only
async def test_readyz_names_the_dependency_that_failed(database_url: str, tmp_path: Path) -> None:
    closed = _free_port()
    degraded = start_process(
        tmp_path / "degraded.log",
        DATABASE_URL=database_url,
        REDIS_URL=f"redis://127.0.0.1:{closed}/0",
    )
    try:
        async with httpx.AsyncClient(base_url=degraded.url, timeout=30) as client:
            for _ in range(8):  # a probe every 250 ms for 2 s
                r = await client.get("/readyz")
                assert r.status_code == 200
                assert r.json() == {
                    "status": "degraded",
                    "checks": {"database": "ok", "redis": "failed", "bus": "failed"},
                }
                await asyncio.sleep(0.25)
        # Why, for the operator only, and once per change (before: 1-2 lines per probe, and
        # the reason in the public body).
        text = degraded.log.read_text()
        assert text.count("readiness check redis failed: redis does not answer") == 1, text
        assert text.count("readiness check bus failed") == 1, text
    finally:
        stop(degraded)
    down = start_server(
        f"postgresql+asyncpg://postgres@127.0.0.1:{closed}/none", migrate_on_start=False
    )
    try:
        async with httpx.AsyncClient(base_url=down.url, timeout=30) as client:
            assert (await client.get("/livez")).json() == {"status": "ok"}
            r = await client.get("/readyz")
            assert r.status_code == 503
            assert r.json() == {
                "code": "not_ready",
                "message": "failed: database",
                "checks": {"database": "failed"},
            }
            before = value(
                await samples(client), "ginrummy_database_errors_total", kind="unavailable"
            )
            r = await client.get("/v1/tables/none")
            assert (r.status_code, r.json()["code"]) == (503, "database_unavailable")
            after = value(
                await samples(client), "ginrummy_database_errors_total", kind="unavailable"
            )
            assert after == before + 1
    finally:
        down.stop()
