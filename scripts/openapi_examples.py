"""Write ``openapi-examples/``: a real request and response for every endpoint and WS message.

    python -m scripts.openapi_examples

Plays through every endpoint against a real server on a temp SQLite file, recording each
exchange (``http/<endpoint>.json``) and the WebSocket messages both ways (``ws/<type>.json``),
and exports the messages' JSON schema (``ws/schema.json``). ``tests/api/test_openapi_examples.py``
validates every file against the app's OpenAPI document and the message models.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from websockets.asyncio.client import ClientConnection, connect

from app.api.live.messages import MESSAGE_MODELS, ws_schema
from app.main import create_app
from app.service.delivery.webpush import b64url, new_private_key
from tests.api.conftest import start_server
from tests.api.helpers import Player, choose, new_player

OUT = Path(__file__).resolve().parent.parent / "openapi-examples"
JSON = dict[str, Any]
CLIENT_TYPES = ("move", "ping")


class Recorder:
    """Calls the server, keeping the first exchange of each endpoint."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        # FastAPI's operationId is the endpoint's name, then its path and method.
        self.names = {
            (method.upper(), path): op["operationId"].removesuffix(
                re.sub(r"\W", "_", path) + "_" + method
            )
            for path, ops in create_app().openapi()["paths"].items()
            for method, op in ops.items()
        }
        self.exchanges: dict[str, JSON] = {}

    async def call(
        self,
        method: str,
        template: str,
        who: Player | None = None,
        body: JSON | None = None,
        query: JSON | None = None,
        **params: str | int,
    ) -> httpx.Response:
        headers = who.auth if who else {}
        path = template.format(**params)
        r = await self.http.request(method, path, json=body, params=query, headers=headers)
        name = self.names[(method, template)]
        if name not in self.exchanges:
            request: JSON = {"path_params": params, "query": query or {}, "headers": headers}
            if body is not None:
                request["body"] = body
            self.exchanges[name] = {
                "method": method,
                "path": template,
                "request": request,
                "response": {"status": r.status_code, "body": _body(r)},
            }
        return r


def _body(r: httpx.Response) -> Any:
    """A JSON body, or an NDJSON one as the list of its lines' values (None: no body)."""
    if not r.content:
        return None
    if r.headers.get("content-type", "").startswith("application/x-ndjson"):
        return [json.loads(line) for line in r.text.splitlines() if line]
    return r.json()


async def _socket(base: str, path: str, who: Player) -> ClientConnection:
    url = base.replace("http://", "ws://", 1) + f"{path}?token={who.token}"
    return await connect(url, proxy=None)


async def _collect(ws: ClientConnection, into: dict[str, JSON]) -> None:
    async for raw in ws:
        message = json.loads(raw)
        into.setdefault(message["type"], message)


async def _tournament(rec: Recorder, ada: Player, bo: Player) -> None:
    """A Swiss of one round: Bo joins and withdraws, two bots play it to its end."""
    body = {"format": "swiss", "name": "Friday Swiss", "rounds": 1, "rules": {"target": 10},
            "admits": "both", "capacity": 16}  # fmt: skip
    r = await rec.call("POST", "/v1/tournaments", ada, body)
    tid = r.json()["tournament_id"]
    await rec.call("POST", "/v1/tournaments/{tournament_id}/join", bo, tournament_id=tid)
    await rec.call("POST", "/v1/tournaments/{tournament_id}/withdraw", bo, tournament_id=tid)
    for level in ("easy", "medium"):
        await rec.call(
            "POST", "/v1/tournaments/{tournament_id}/bots", ada, {"level": level},
            tournament_id=tid,
        )  # fmt: skip
    await rec.call("POST", "/v1/tournaments/{tournament_id}/start", ada, tournament_id=tid)
    while (await rec.http.get(f"/v1/tournaments/{tid}")).json()["status"] != "finished":
        await asyncio.sleep(0.1)
    await rec.call("GET", "/v1/tournaments/{tournament_id}", bo, tournament_id=tid)
    await rec.call("GET", "/v1/tournaments/{tournament_id}/export", tournament_id=tid)
    await rec.call("GET", "/v1/tournaments", query={"status": "finished", "limit": 10})


async def _ladder(rec: Recorder, http: httpx.AsyncClient) -> None:
    """A bot account says it is available for the bot ladder, then no longer."""
    r = await http.post("/v1/players", json={"name": "RoboGin", "bot": True})
    robo = Player(r.json()["id"], "RoboGin", r.json()["token"])
    await rec.call("PUT", "/v1/bots/me/available", robo, {"available": True})
    await rec.call("GET", "/v1/bots/online")
    await rec.call("GET", "/v1/bots/ladder", query={"limit": 10})
    await http.put("/v1/bots/me/available", json={"available": False}, headers=robo.auth)


async def record(base: str) -> tuple[dict[str, JSON], dict[str, JSON]]:
    messages: dict[str, JSON] = {}
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        rec = Recorder(http)
        ada_body = {"name": "Ada"}
        r = await rec.call("POST", "/v1/players", body=ada_body)
        ada = Player(r.json()["id"], "Ada", r.json()["token"])
        bo = await new_player(http, "Bo")
        await rec.call("GET", "/v1/players/me", ada)
        notes = await _socket(base, "/v1/players/me/ws", ada)
        tasks = [asyncio.create_task(_collect(notes, messages))]
        body: JSON | None = {"preset": "standard", "rules": {"target": 40}, "deck_design": "royal"}
        table = (await rec.call("POST", "/v1/tables", ada, body=body)).json()
        tid = table["table_id"]
        code = table["invite_code"]
        await rec.call("GET", "/v1/invites/{code}", bo, code=code)
        joining = {"deck_design": "neon", "table_id": tid}
        await rec.call("POST", "/v1/invites/{code}", bo, joining, code=code)
        await rec.call("PUT", "/v1/tables/{table_id}/deck", bo, {"design": "forest"}, table_id=tid)
        await rec.call(
            "POST", "/v1/tables/{table_id}/chat", ada, {"text": "good luck!"}, table_id=tid
        )
        seats = [await _socket(base, f"/v1/tables/{tid}/ws", p) for p in (ada, bo)]
        tasks += [asyncio.create_task(_collect(ws, messages)) for ws in seats]
        await rec.call("POST", "/v1/tables/{table_id}/start", ada, {}, table_id=tid)
        await rec.call("GET", "/v1/tables/{table_id}", bo, table_id=tid)
        players = [ada, bo]
        sent: dict[str, JSON] = {"ping": {"type": "ping", "id": "p-1"}}
        await seats[0].send(json.dumps(sent["ping"]))
        refused = False
        hands = 0
        while True:
            view = (await http.get(f"/v1/tables/{tid}", headers=ada.auth)).json()
            game = view["game"]
            if game["match"]["status"] == "finished":
                break
            hand = game["hand"]
            if hand["phase"] == "over":
                hands += 1
                await rec.call(
                    "GET",
                    "/v1/tables/{table_id}/hands/{number}",
                    table_id=tid,
                    number=hand["number"],
                )
                await rec.call(
                    "GET",
                    "/v1/tables/{table_id}/hands/{number}/review",
                    table_id=tid,
                    number=hand["number"],
                )
                await rec.call("POST", "/v1/tables/{table_id}/next-hand", ada, table_id=tid)
                continue
            seat = hand["turn"]
            who = players[seat]
            if seat != 0:
                view = (await http.get(f"/v1/tables/{tid}", headers=who.auth)).json()
            if not refused:
                # A move out of turn over the socket: the error message.
                await seats[1 - seat].send(
                    json.dumps({"type": "move", "id": "m-0", "kind": "draw_stock"})
                )
                refused = True
            suffix, body = choose(view)
            if suffix == "moves/draw" and "move" not in sent:
                sent["move"] = {"type": "move", "id": "m-1", "kind": "draw_stock"}
                await seats[seat].send(json.dumps(sent["move"]))
                while "ack" not in messages:
                    await asyncio.sleep(0.01)
                continue
            await rec.call("POST", f"/v1/tables/{{table_id}}/{suffix}", who, body, table_id=tid)
        await rec.call(
            "GET", "/v1/tables/{table_id}/matches/{number}/review", table_id=tid, number=1
        )
        await rec.call("GET", "/v1/players/{player_id}/stats", player_id=ada.id)
        r = await http.post("/v1/tables", json={"hints": True}, headers=ada.auth)
        hinted = r.json()["table_id"]
        await http.post(f"/v1/invites/{r.json()['invite_code']}", headers=bo.auth)
        await http.post(f"/v1/tables/{hinted}/start", headers=ada.auth)
        view = (await http.get(f"/v1/tables/{hinted}", headers=ada.auth)).json()
        mover = players[view["game"]["hand"]["turn"]]
        await rec.call("GET", "/v1/tables/{table_id}/hint", mover, table_id=hinted)
        r = await http.post("/v1/tables", json={}, headers=ada.auth)
        other = r.json()["table_id"]
        await http.post(f"/v1/invites/{r.json()['invite_code']}", headers=bo.auth)
        await http.post(f"/v1/tables/{other}/start", headers=ada.auth)
        view = (await http.get(f"/v1/tables/{other}", headers=ada.auth)).json()
        mover = players[view["game"]["hand"]["turn"]]
        await rec.call(
            "POST",
            "/v1/tables/{table_id}/moves/pass",
            mover,
            {"expected_version": view["version"]},
            table_id=other,
        )
        # The first refused the upcard: it is offered to the other, who takes it.
        taker = players[1 - players.index(mover)]
        await rec.call("POST", "/v1/tables/{table_id}/moves/take-upcard", taker, table_id=other)
        await rec.call("POST", "/v1/tables/{table_id}/moves/big-gin", taker, table_id=other)
        await rec.call(
            "GET", "/v1/tables/{table_id}/events", bo, query={"since": 3, "limit": 5}, table_id=tid
        )
        r = await http.post("/v1/tables", json={}, headers=ada.auth)
        with_bot = r.json()["table_id"]
        await rec.call(
            "POST", "/v1/tables/{table_id}/bot", ada, {"level": "hard"}, table_id=with_bot
        )
        await rec.call("DELETE", "/v1/tables/{table_id}/bot", ada, table_id=with_bot)
        # Bo asks for a rematch, Ada declines; asked again, she accepts, then resigns.
        await rec.call("POST", "/v1/tables/{table_id}/rematch", bo, {}, table_id=tid)
        await rec.call("POST", "/v1/tables/{table_id}/rematch/decline", ada, {}, table_id=tid)
        await http.post(f"/v1/tables/{tid}/rematch", json={}, headers=bo.auth)
        await rec.call("POST", "/v1/tables/{table_id}/rematch/accept", ada, {}, table_id=tid)
        await rec.call("POST", "/v1/tables/{table_id}/resign", ada, {}, table_id=tid)
        # A clocked table whose player to move, having moved before (a seat that never moved
        # has the match aborted), lets their time run out: the other claims.
        clocked = {"clock": {"control": "per_move", "seconds": 2, "policy": "claim"}}
        r = await http.post("/v1/tables", json=clocked, headers=ada.auth)
        timed = r.json()["table_id"]
        await http.post(f"/v1/invites/{r.json()['invite_code']}", headers=bo.auth)
        await http.post(f"/v1/tables/{timed}/start", headers=ada.auth)
        moved: set[int] = set()
        while moved != {0, 1}:
            view = (await http.get(f"/v1/tables/{timed}", headers=ada.auth)).json()
            turn = view["game"]["hand"]["turn"]
            view = (await http.get(f"/v1/tables/{timed}", headers=players[turn].auth)).json()
            suffix, body = choose(view)
            await http.post(f"/v1/tables/{timed}/{suffix}", json=body, headers=players[turn].auth)
            moved.add(turn)
        while True:
            view = (await http.get(f"/v1/tables/{timed}", headers=ada.auth)).json()
            if view["clock"]["expired"] is not None:
                break
            await asyncio.sleep(0.1)
        claimer = players[1 - view["clock"]["expired"]]
        await rec.call("POST", "/v1/tables/{table_id}/claim", claimer, {}, table_id=timed)
        r = await http.post("/v1/tables", json={"rated": True}, headers=ada.auth)
        rated = r.json()["table_id"]
        await http.post(f"/v1/invites/{r.json()['invite_code']}", headers=bo.auth)
        await http.post(f"/v1/tables/{rated}/start", headers=ada.auth)
        await http.post(f"/v1/tables/{rated}/resign", headers=bo.auth)
        await rec.call("GET", "/v1/players/me/matches", ada)
        await rec.call("GET", "/v1/matches/{match_id}/record", match_id=f"{rated}-1")
        await rec.call("GET", "/v1/players/me/matches/export", bo)
        await rec.call("POST", "/v1/ws-tickets", bo)
        laptop = (await rec.call("POST", "/v1/players/me/tokens", bo, {"label": "laptop"})).json()
        await rec.call("GET", "/v1/players/me/tokens", bo)
        on_laptop = Player(bo.id, bo.name, laptop["token"])
        rotated = (await rec.call("POST", "/v1/players/me/tokens/rotate", on_laptop)).json()
        await rec.call("DELETE", "/v1/players/me/tokens/{token_id}", bo, token_id=rotated["id"])
        hook = {"url": "https://93.184.215.14/ginrummy"}
        await rec.call("PUT", "/v1/players/me/webhook", ada, hook)
        await rec.call("POST", "/v1/players/me/webhook/test", ada)
        await rec.call("PUT", "/v1/players/me/notifications", ada, {"reminders": "each_turn"})
        await rec.call("GET", "/v1/players/me/notifications", ada)
        r = await http.post("/v1/tables", json={}, headers=ada.auth)
        await http.post(f"/v1/invites/{r.json()['invite_code']}", headers=bo.auth)
        await rec.call("GET", "/v1/players/me/notifications/deliveries", ada)
        await rec.call("DELETE", "/v1/players/me/webhook", ada)
        await rec.call("GET", "/v1/push/key")
        browser = ec.generate_private_key(ec.SECP256R1()).public_key()
        subscription = {
            "endpoint": "https://fcm.googleapis.com/fcm/send/eXaMpLe:APA91bExample",
            "expirationTime": None,
            "keys": {
                "p256dh": b64url(
                    browser.public_bytes(
                        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
                    )
                ),
                "auth": b64url(os.urandom(16)),
            },
        }
        pushed = (
            await rec.call("POST", "/v1/players/me/push-subscriptions", bo, subscription)
        ).json()
        await rec.call("GET", "/v1/players/me/push-subscriptions", bo)
        await rec.call(
            "DELETE",
            "/v1/players/me/push-subscriptions/{subscription_id}",
            bo,
            subscription_id=pushed["id"],
        )
        await _tournament(rec, ada, bo)
        await _ladder(rec, http)
        lobby = await _socket(base, "/v1/lobby/ws", bo)
        tasks.append(asyncio.create_task(_collect(lobby, messages)))
        await _lobby(rec, http, ada, bo, messages)
        await rec.call("GET", "/v1/leaderboards/{category}", category="standard")
        await rec.call("GET", "/v1/players/{player_id}", player_id=ada.id)
        await rec.call("GET", "/healthz")
        await rec.call("GET", "/livez")
        await rec.call("GET", "/readyz")
        await asyncio.sleep(0.5)  # a heartbeat
        for ws in (notes, *seats, lobby):
            await ws.close()
        await asyncio.gather(*tasks, return_exceptions=True)
    # No event of a real game is hidden from a seat whole: the skip comes from its model.
    messages.setdefault("skip", {"type": "skip", "seq": 11})
    messages.update(sent)
    return rec.exchanges, messages


async def _lobby(
    rec: Recorder, http: httpx.AsyncClient, ada: Player, bo: Player, messages: dict[str, JSON]
) -> None:
    """Seeks and challenges: a bot offered and taken, a listed seek accepted, a challenge
    declined, an open one taken, one withdrawn, a bot account marked."""
    carl, dee = await new_player(http, "Carl"), await new_player(http, "Dee")
    live = {"preset": "standard", "clock": {"control": "bank", "seconds": 300, "bonus": 5}}
    body = {**live, "rated": True, "rating_min": 1400, "rating_max": 1450, "bot_after": 5}
    waiting = (await rec.call("POST", "/v1/seeks", ada, body)).json()
    while "bot_offered" not in messages:
        await asyncio.sleep(0.1)
    await rec.call("GET", "/v1/seeks/{seek_id}", seek_id=waiting["seek_id"])
    pick = {"level": "medium"}
    await rec.call("POST", "/v1/seeks/{seek_id}/bot", ada, pick, seek_id=waiting["seek_id"])
    days = {"preset": "standard", "clock": {"control": "per_move", "seconds": 259200}}
    r = await http.post("/v1/seeks", json={**days, "rating_min": 4000}, headers=bo.auth)
    listed = r.json()["seek_id"]
    await rec.call("GET", "/v1/seeks")
    await rec.call("POST", "/v1/seeks/{seek_id}/accept", carl, seek_id=listed)
    r = await http.post("/v1/seeks", json={"preset": "classic"}, headers=dee.auth)
    await rec.call("DELETE", "/v1/seeks/{seek_id}", dee, seek_id=r.json()["seek_id"])
    to_bo = {"to": "Bo", **days}
    challenge = (await rec.call("POST", "/v1/challenges", ada, to_bo)).json()
    await rec.call("GET", "/v1/players/me/seeks", bo)
    await rec.call("GET", "/v1/challenges/{challenge_id}", challenge_id=challenge["seek_id"])
    await rec.call(
        "POST",
        "/v1/challenges/{challenge_id}/decline",
        bo,
        {"reason": "later"},
        challenge_id=challenge["seek_id"],
    )
    r = await http.post("/v1/challenges", json={"preset": "classic"}, headers=dee.auth)
    await rec.call(
        "POST", "/v1/challenges/{challenge_id}/accept", carl, challenge_id=r.json()["seek_id"]
    )
    r = await http.post("/v1/challenges", json={"preset": "classic"}, headers=dee.auth)
    await rec.call("DELETE", "/v1/challenges/{challenge_id}", dee, challenge_id=r.json()["seek_id"])
    robot = await new_player(http, "Robo")
    await rec.call("POST", "/v1/players/me/bot", robot)
    while "seek_removed" not in messages or "seek_paired" not in messages:
        await asyncio.sleep(0.1)


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(
            f"sqlite+aiosqlite:///{tmp}/examples.db",
            ws_heartbeat=0.3,
            vapid_private_key=new_private_key(),
            vapid_subject="mailto:ops@example.com",
        )
        try:
            exchanges, messages = asyncio.run(record(server.url))
        finally:
            server.stop()
    missing = set(MESSAGE_MODELS) - set(messages)
    assert not missing, f"no example of {sorted(missing)}"
    shutil.rmtree(OUT, ignore_errors=True)
    for name, exchange in sorted(exchanges.items()):
        _write(OUT / "http" / f"{name}.json", exchange)
    for kind, message in sorted(messages.items()):
        direction = "client_to_server" if kind in CLIENT_TYPES else "server_to_client"
        _write(OUT / "ws" / f"{kind}.json", {"direction": direction, "message": message})
    _write(OUT / "ws" / "schema.json", ws_schema())
    print(f"{len(exchanges)} endpoints, {len(messages)} message types in {OUT}")


if __name__ == "__main__":
    main()
