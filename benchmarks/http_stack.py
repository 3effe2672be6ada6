"""What the app's HTTP stack adds to a move's CPU, in process: no server, no client, no sockets.

    python benchmarks/http_stack.py [--db sqlite postgresql] [--moves 3000] [--tables 20]

One app (``create_app``, its lifespan run here, in-process bus) plays random legal moves on
``--tables`` tables, in rounds that alternate two ways of making the same kind of move: straight
into the pipeline (``TableService.submit``), and as an ASGI request to the app itself (every
layer from Starlette's entry down: the error middlewares, the gateway with its access log,
metrics and rate limits, the move lane or the FastAPI route; a request as uvicorn would hand
it over, with ``Content-Length`` and a bearer token). The figure is this process's CPU time
(``time.process_time``) per move of each way; their difference is the stack's cost per move,
which a loaded machine disturbs far less than the whole server benchmark
(``benchmarks/server.py``), where uvicorn, the client and the database share the cores. Next
hand and rematch are made the same way as the moves (``next-hand`` is a FastAPI route). The
last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import uvloop

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine import Action, MatchState, apply, legal_actions  # noqa: E402
from app.main import create_app  # noqa: E402
from app.service.pipeline import TableService  # noqa: E402
from app.settings import Settings  # noqa: E402
from app.table.commands import Actor, Join, Play, Rematch, Start  # noqa: E402
from benchmarks.server import database  # noqa: E402

# An action's route and body, as a client sends it.
PATHS = {
    "take_upcard": ("moves/take-upcard", None),
    "pass": ("moves/pass", None),
    "draw_stock": ("moves/draw", {"source": "stock"}),
    "draw_discard": ("moves/draw", {"source": "discard"}),
    "discard": ("moves/discard", "card"),
    "knock": ("moves/knock", "card"),
    "big_gin": ("moves/big-gin", None),
    "next_hand": ("next-hand", None),
}


def request(table_id: str, token: str, action: Action) -> tuple[dict[str, Any], bytes]:
    """The ASGI scope and body of ``action`` as an HTTP request."""
    path, body = PATHS[action.kind]
    if body == "card":
        body = {"card": action.to_dict()["card"]}
    raw = orjson.dumps(body if body is not None else {})
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": f"/v1/tables/{table_id}/{path}",
        "raw_path": f"/v1/tables/{table_id}/{path}".encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"user-agent", b"bench"),
            (b"authorization", b"Bearer " + token.encode()),
            (b"content-type", b"application/json"),
            (b"content-length", b"%d" % len(raw)),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    return scope, raw


async def call(app: Any, scope: dict[str, Any], raw: bytes) -> int:
    """Send one request through ``app``; its status."""
    status = 0
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if given:
            await asyncio.sleep(3600)  # no disconnect while the app works
        given = True
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def play(app: Any, service: TableService, tables: int, moves: int) -> dict[str, float]:
    games: list[tuple[str, list[tuple[Actor, str]]]] = []
    for i in range(tables):
        a = await service.create_player(f"a{i}")
        b = await service.create_player(f"b{i}")
        table_id = (await service.create_table(a[0], "standard", {})).body["table_id"]
        await service.submit(table_id, b[0], Join())
        await service.submit(table_id, a[0], Start())
        games.append((table_id, [a, b]))
    rng = random.Random(1)
    states: dict[str, MatchState | None] = {t: (await service.load(t)).state for t, _ in games}
    cpu = {"pipeline": 0.0, "asgi": 0.0}
    made = {"pipeline": 0, "asgi": 0}
    round_moves = 50
    for done in range(0, moves, round_moves):
        way = "pipeline" if (done // round_moves) % 2 == 0 else "asgi"
        started = time.process_time()
        for k in range(round_moves):
            table_id, players = games[(done + k) % tables]
            state = states[table_id]
            assert state is not None
            if state.status == "finished":
                await service.submit(table_id, players[0][0], Rematch())
                states[table_id] = (await service.load(table_id)).state
                continue
            seat = state.hand.turn
            action = rng.choice([a for a in legal_actions(state, seat) if a.kind != "resign"])
            actor, token = players[seat]
            if way == "pipeline":
                await service.submit(table_id, actor, Play(action))
            else:
                status = await call(app, *request(table_id, token, action))
                assert status == 200, (status, action)
            states[table_id] = apply(state, seat, action)[0]
            made[way] += 1
        cpu[way] += time.process_time() - started
    return {way: cpu[way] * 1000 / max(1, made[way]) for way in cpu}


async def run(kind: str, tables: int, moves: int) -> dict[str, Any]:
    async with database(kind) as url:
        settings = Settings(database_url=url, redis_url=None, gc_freeze=False)
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            figures = await play(app, app.state.service, tables, moves)
    return {
        "pipeline_ms": round(figures["pipeline"], 3),
        "asgi_ms": round(figures["asgi"], 3),
        "stack_ms": round(figures["asgi"] - figures["pipeline"], 3),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--moves", type=int, default=3000)
    args = parser.parse_args()
    results = {kind: uvloop.run(run(kind, args.tables, args.moves)) for kind in args.db}
    for kind, r in results.items():
        print(
            f"{kind}: CPU per move {r['pipeline_ms']} ms in the pipeline, {r['asgi_ms']} ms "
            f"through the app: the stack adds {r['stack_ms']} ms (load {r['loadavg_1m']})"
        )
    print(json.dumps({"benchmark": "http_stack", **results}))


if __name__ == "__main__":
    main()
