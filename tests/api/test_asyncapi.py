"""The sockets' AsyncAPI document (``/asyncapi.json``): valid for the AsyncAPI parser, the same
as the committed copy, and true to what the server sends.

The corpus is recorded here from a real server: a full match with two seats, a spectator and
both players' sockets, moves over the socket (acks and refusals), pings, chat (a spectator's
skip), a resume with ``since``, heartbeats, a revoked token, and refused handshakes with their
close codes. Every message of it must validate against the document's schema for its channel,
every message the document lists for a channel must occur, and every close code seen must be
documented.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import jsonschema
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from scripts.asyncapi_docs import render
from scripts.web_schemas import ASYNCAPI_FILE, SOCKETS_DOC, dumps
from tests.api.conftest import Server, sqlite_only, start_server
from tests.api.helpers import JSON, Player, choose, get_table, mover, new_player, new_table, step
from tests.waiting import until

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "typescript"

# The socket move for each HTTP move of ``helpers.choose``.
KINDS = {
    "moves/pass": "pass",
    "moves/take-upcard": "take_upcard",
    "moves/discard": "discard",
    "moves/knock": "knock",
    "moves/big-gin": "big_gin",
    "next-hand": "next_hand",
}


@pytest.fixture(scope="module")
def served(database_url: str) -> Iterator[Server]:
    """A server whose heartbeat comes every 0.3 s."""
    running = start_server(database_url, ws_heartbeat=0.3)
    yield running
    running.stop()


@pytest.fixture
async def http(served: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        yield client


async def _document(http: httpx.AsyncClient) -> JSON:
    r = await http.get("/asyncapi.json")
    assert r.status_code == 200, r.text
    document: JSON = r.json()
    return document


@sqlite_only
async def test_the_document_is_valid_asyncapi_3_and_the_committed_one(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    document = await _document(http)
    assert document["asyncapi"].startswith("3.")
    assert ASYNCAPI_FILE.read_text() == dumps(document), "run `make web-types` and commit"
    assert SOCKETS_DOC.read_text() == render(document), "run `make web-types` and commit"
    assert (SDK / "node_modules" / "@asyncapi" / "parser").exists(), "run `make test`"
    path = tmp_path / "asyncapi.json"
    path.write_text(json.dumps(document))
    # And a broken copy, which the parser must refuse: the check can fail.
    broken = json.loads(json.dumps(document))
    del broken["channels"]["table"]["address"]
    broken["operations"]["tableSend"]["action"] = "emit"
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    checked = subprocess.run(
        ["node", "scripts/validate-asyncapi.mjs", str(path), str(tmp_path / "broken.json")],
        cwd=SDK,
        capture_output=True,
        text=True,
        check=False,
    )
    good, bad = (json.loads(line) for line in checked.stdout.splitlines()[-2:])
    assert good["valid"], good
    assert good["channels"] == ["/v1/tables/{table_id}/ws", "/v1/players/me/ws"]
    assert not bad["valid"] and bad["errors"]
    assert checked.returncode == 1, checked.stderr


class Tape:
    """Every message each recorded socket received, by channel, and how each closed."""

    def __init__(self, base: str) -> None:
        self.base = base.replace("http://", "ws://", 1)
        self.messages: list[tuple[str, JSON]] = []
        self.closes: list[int] = []
        self.refusals: list[tuple[str, int]] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def open(
        self, channel: str, path: str, **headers: str
    ) -> tuple[ClientConnection, list[JSON]]:
        """Open ``path``, record what it receives as ``channel``; the socket and its messages."""
        ws = await connect(self.base + path, additional_headers=headers, proxy=None)
        got: list[JSON] = []

        async def run() -> None:
            try:
                async for raw in ws:
                    message = json.loads(raw)
                    got.append(message)
                    self.messages.append((channel, message))
            except ConnectionClosed:
                pass
            if ws.close_code is not None:
                self.closes.append(ws.close_code)

        self.tasks.append(asyncio.create_task(run()))
        return ws, got

    async def refused(self, channel: str, path: str, **headers: str) -> int:
        """A handshake the server refuses: its close code (its error message is recorded)."""
        ws, _ = await self.open(channel, path, **headers)
        await asyncio.wait_for(self.tasks[-1], 10)
        assert ws.close_code is not None
        self.refusals.append((channel, ws.close_code))
        return ws.close_code


async def _ticket(http: httpx.AsyncClient, who: Player) -> str:
    r = await http.post("/v1/ws-tickets", headers=who.auth)
    assert r.status_code == 201, r.text
    return str(r.json()["ticket"])


def _types(got: list[JSON]) -> list[str]:
    return [m["type"] for m in got]


def _has(got: list[JSON], kind: str | None = None, more_than: int = 0) -> Callable[[], bool]:
    """Whether ``got`` has more than ``more_than`` messages (of ``kind``)."""
    return lambda: sum(kind in (None, m["type"]) for m in got) > more_than


async def _record(served: Server, http: httpx.AsyncClient) -> Tape:
    tape = Tape(served.url)
    p0, p1 = await new_player(http, "Ada"), await new_player(http, "Bo")
    table = await new_table(http, p0, rules={"target": 30})
    tid = table["table_id"]
    ticket = await _ticket(http, p0)
    notes0_ws, notes0 = await tape.open("player", f"/v1/players/me/ws?ticket={ticket}")
    notes1_ws, notes1 = await tape.open("player", "/v1/players/me/ws", **p1.auth)
    await notes0_ws.send(json.dumps({"type": "ping"}))
    await until(lambda: "pong" in _types(notes0), what="the player's socket")
    assert (await http.post(f"/v1/invites/{table['invite_code']}", headers=p1.auth)).is_success
    await until(lambda: "opponent_joined" in _types(notes0), what="opponent_joined")
    await notes1_ws.send(json.dumps({"type": "move", "kind": "pass", "id": "x"}))
    await notes1_ws.send(json.dumps({"type": "ping", "id": "n1"}))
    await until(lambda: "pong" in _types(notes1) and "error" in _types(notes1))
    assert (await http.post(f"/v1/tables/{tid}/start", headers=p0.auth)).is_success

    seat0, got0 = await tape.open("table", f"/v1/tables/{tid}/ws?ticket={await _ticket(http, p0)}")
    seat1, got1 = await tape.open("table", f"/v1/tables/{tid}/ws?token={p1.token}")
    watcher, watched = await tape.open("table", f"/v1/tables/{tid}/ws")
    for ws, got in ((seat0, got0), (seat1, got1), (watcher, watched)):
        await until(_has(got), what="a view")
        await ws.send(json.dumps({"type": "ping", "id": "p"}))
        await ws.send("{not json")
    await watcher.send(json.dumps({"type": "move", "kind": "pass"}))  # a spectator: refused
    r = await http.post(f"/v1/tables/{tid}/chat", json={"text": "gl"}, headers=p0.auth)
    assert r.is_success, r.text

    # The match, its moves over the seats' sockets: each answered by an ack.
    players, sockets, gots = [p0, p1], [seat0, seat1], [got0, got1]
    view = await get_table(http, tid, p0)
    waiting = 1 - mover(view)
    await sockets[waiting].send(json.dumps({"type": "move", "kind": "draw_stock", "id": "early"}))
    moves = 0
    resumed = False
    while view["game"]["match"]["status"] != "finished":
        seat = mover(view)
        if view["you"] != seat:
            view = await get_table(http, tid, players[seat])
        if moves == 6 and not resumed:  # seat 1 drops, misses moves, resumes with since
            await seat1.close()
            last = max(m["seq"] for m in got1 if m["type"] in ("view", "event", "skip"))
            view = (await step(http, tid, players, view))["table"]
            view = (await step(http, tid, players, view))["table"]
            again = f"/v1/tables/{tid}/ws?since={last}&token={p1.token}"
            seat1, got1 = await tape.open("table", again)
            await until(_has(got1), what="the catch-up")
            assert got1[0]["type"] == "event" and got1[0]["seq"] == last + 1
            sockets[1], gots[1] = seat1, got1
            resumed = True
            continue
        path, body = choose(view)
        kind = KINDS.get(path) or f"draw_{(body or {})['source']}"
        move = {"type": "move", "id": f"m{moves}", "kind": kind, **(body or {})}
        move.pop("source", None)
        acks = _types(gots[seat]).count("ack")
        await sockets[seat].send(json.dumps(move))
        await until(_has(gots[seat], "ack", acks), what=f"the ack of {move}")
        view = next(m for m in reversed(gots[seat]) if m["type"] == "ack")["table"]
        moves += 1
    await until(lambda: "match_finished" in _types(notes0) and "match_finished" in _types(notes1))
    for got in (got0, watched, notes0):
        await until(_has(got, "heartbeat"), what="a heartbeat")
    # A since beyond the newest seq: a view.
    _, fresh = await tape.open("table", f"/v1/tables/{tid}/ws?since=100000")
    await until(lambda: bool(fresh))
    assert fresh[0]["type"] == "view"

    # A rotated token: its sockets are told, then closed (4401).
    assert (await http.post("/v1/players/me/tokens/rotate", headers=p1.auth)).is_success
    await until(lambda: any(m.get("code") == "token_revoked" for m in notes1), what="revoked")

    # Refused handshakes.
    used = await _ticket(http, p0)
    assert await tape.refused("table", f"/v1/tables/{tid}/ws?ticket=nope") == 4401
    assert await tape.refused("table", f"/v1/tables/{tid}/ws?token=nope") == 4401
    assert await tape.refused("table", f"/v1/tables/{tid}/ws?since=x") == 4400
    assert await tape.refused("table", "/v1/tables/nope/ws") == 4404
    assert await tape.refused("player", "/v1/players/me/ws") == 4401
    assert await tape.refused("player", "/v1/players/me/ws", Origin="http://evil.example") == 4403
    ws, _ = await tape.open("player", f"/v1/players/me/ws?ticket={used}")
    assert await tape.refused("player", f"/v1/players/me/ws?ticket={used}") == 4401
    await ws.close()
    for task in tape.tasks:
        if not task.done():
            task.cancel()
    await asyncio.gather(*tape.tasks, return_exceptions=True)
    return tape


def _validators(document: JSON) -> dict[str, dict[str, jsonschema.Draft202012Validator]]:
    """For each channel, a validator for each message it lists, by the message's type."""
    out: dict[str, dict[str, jsonschema.Draft202012Validator]] = {}
    for name, channel in document["channels"].items():
        out[name] = {}
        for key in channel["messages"]:
            message = document["components"]["messages"][key]
            schema = {**document, **message["payload"]}
            out[name][key] = jsonschema.Draft202012Validator(schema)
    return out


@sqlite_only
async def test_every_message_of_a_recorded_match_matches_the_document(
    served: Server, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    document = await _document(http)
    tape = await _record(served, http)
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"channel": c, "message": m}) + "\n" for c, m in tape.messages)
    )
    validators = _validators(document)
    sent: dict[str, set[str]] = {"table": set(), "player": set()}
    for channel, message in tape.messages:
        kind = message["type"]
        assert kind in validators[channel], f"{channel} sent {kind}, not in the document"
        errors = [e.message for e in validators[channel][kind].iter_errors(message)]
        assert not errors, (channel, message, errors)
        sent[channel].add(kind)
    operations = document["operations"]
    for channel in ("table", "player"):
        listed = {ref["$ref"].rsplit("/", 1)[1] for ref in operations[f"{channel}Send"]["messages"]}
        assert sent[channel] == listed, (
            f"{channel}: listed but never sent: {listed - sent[channel]}"
        )
    documented = {c["code"] for c in document["channels"]["table"]["x-close-codes"]}
    assert set(tape.closes) - {1000, 1005} <= documented
    for channel, code in tape.refusals:
        assert code in {c["code"] for c in document["channels"][channel]["x-close-codes"]}
    assert {4400, 4401, 4403, 4404} <= set(tape.closes)
    # A message that drifts from the document is caught: the check can fail.
    view = next(m for c, m in tape.messages if m["type"] == "view")
    assert list(validators["table"]["view"].iter_errors({**view, "seq": "9"}))
    assert list(validators["table"]["skip"].iter_errors({"type": "skip", "seq": 1, "extra": 1}))
