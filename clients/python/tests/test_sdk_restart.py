"""The Python SDK across a server restart mid-match: the table socket reconnects, resumes with
``since``, and its reader gets every event of the match once, in order; the match finishes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ginrummy_client import Client, TableSocket
from ginrummy_client.bot import PythonEngine, TablePlayer
from tests.api.conftest import _free_port
from tests.api.processes import start_process, stop
from tests.waiting import until

JSON = dict[str, Any]


def choose(view: JSON) -> JSON:
    """Knock when it can, else take the stock and shed the last legal discard."""
    legal = view["game"]["legal"]
    if legal["knock_discards"]:
        return {"kind": "knock", "card": legal["knock_discards"][0]["card"]}
    for kind in ("pass", "draw_stock"):
        if kind in legal["actions"]:
            return {"kind": kind}
    return {"kind": "discard", "card": legal["discards"][-1]}


def check_once_in_order(messages: list[JSON]) -> list[int]:
    """The seqs of a reader's messages: one view first, then each event once, contiguous."""
    sequenced = [m for m in messages if m["type"] in ("view", "event", "skip")]
    assert sequenced[0]["type"] == "view"
    assert [m["type"] for m in sequenced[1:]].count("view") == 0, "resumed with a view"
    seqs = [m["seq"] for m in sequenced]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "an event lost or repeated"
    return seqs


async def test_a_bot_plays_on_through_a_server_restart(tmp_path: Path) -> None:
    port = _free_port()
    env = {
        "PORT": str(port),
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'restart.db'}",
        "WS_HEARTBEAT": "1",
    }
    server = start_process(tmp_path / "before.log", **env)
    messages: list[JSON] = []
    try:
        async with Client(server.url) as api:
            await api.sign_up("Rex")
            table = await api.create_table(rules={"target": 60})
            table_id = table["table_id"]
            await api.seat_bot(table_id, "easy")
            player = TablePlayer(api, table_id, PythonEngine(choose), on_message=messages.append)
            socket = TableSocket(api, table_id)
            playing = asyncio.create_task(player.play(socket))
            await until(lambda: player.moves >= 4 or playing.done(), what="moves")
            assert not playing.done()
            stop(server)  # mid-match: the socket is cut, its reconnects refused meanwhile
            before = socket.last_seq
            server = start_process(tmp_path / "after.log", **env)
            results = await asyncio.wait_for(playing, 120)
            assert results and results[0]["winner"] in (0, 1)
            assert socket.connects >= 2
            seqs = check_once_in_order(messages)
            assert before is not None and seqs[-1] > before
            # What it read is the table's log, event for event.
            history = await api.events(table_id, seqs[0], len(seqs) - 1)
            read = [
                m["event"]["type"] if m["type"] == "event" else "skip"
                for m in messages
                if m["type"] in ("event", "skip")
            ]
            assert read == [e["type"] for e in history]
    finally:
        stop(server)
