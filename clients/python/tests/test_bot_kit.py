"""``ginrummy-bot`` as its users run it: a process, with the server's own levels as engines
over the line protocol (``python -m app.bots.engine``), against a server bot, against another
kit process, and from webhooks."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.api.conftest import Server

BOT = Path(sys.executable).parent / "ginrummy-bot"


def engine(level: str) -> str:
    return f"{sys.executable} -m app.bots.engine --level {level}"


async def kit(*args: str, timeout: float = 120) -> Any:
    """Run ``ginrummy-bot args``: its summary (its last line)."""
    process = await asyncio.create_subprocess_exec(BOT, *args, stdout=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode == 0
    return json.loads(out.decode().splitlines()[-1])


async def table_of(server: Server, table_id: str) -> Any:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        r = await http.get(f"/v1/tables/{table_id}")
        assert r.status_code == 200, r.text
        return r.json()


async def test_the_kit_plays_matches_against_a_server_bot(
    sdk_server: Server, tmp_path: Path
) -> None:
    """From a config file: creates two tables, seats a server bot at each, plays both at once
    with one engine process, rematches, and keeps the account's token in its file."""
    config = tmp_path / "bot.toml"
    token = tmp_path / "rob.token"
    config.write_text(
        f'server = "{sdk_server.url}"\nname = "Rob"\ntoken_file = "{token}"\n'
        f"engine = {json.dumps(engine('hard').split())}\nmatches = 2\n"
        '[[create]]\nrules = { target = 30 }\nvs = "easy"\ncount = 2\n'
    )
    summary = await kit("--config", str(config))
    tables = summary["tables"]
    assert len({t["table_id"] for t in tables}) == 2
    for table in tables:
        assert [m["match_number"] for m in table["matches"]] == [1, 2]
        assert all(m["winner"] in (0, 1) and m["seat"] == 0 for m in table["matches"])
        assert table["moves"] > 0
        view = await table_of(sdk_server, table["table_id"])
        assert view["game"]["match"]["status"] == "finished"
        assert view["seats"][1]["bot_level"] == "easy"
    assert token.read_text().strip()


async def test_two_kit_processes_play_a_match(sdk_server: Server) -> None:
    """One kit creates a table and prints its invite; another accepts it: one full match."""
    process = await asyncio.create_subprocess_exec(
        BOT,
        *("--server", sdk_server.url, "--name", "Ana", "--engine", engine("medium")),
        *("--create", "--rule", "target=30"),
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    offer = json.loads(await asyncio.wait_for(process.stdout.readline(), 30))
    joiner = await kit(
        *("--server", sdk_server.url, "--name", "Bea", "--engine", engine("easy")),
        *("--invite", offer["invite_code"]),
    )
    out, _ = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0
    creator = json.loads(out.decode().splitlines()[-1])
    [mine], [theirs] = creator["tables"], joiner["tables"]
    assert mine["table_id"] == theirs["table_id"] == offer["table_id"]
    assert mine["matches"][0]["winner"] == theirs["matches"][0]["winner"]
    assert (mine["matches"][0]["seat"], theirs["matches"][0]["seat"]) == (0, 1)
    assert mine["moves"] > 0 and theirs["moves"] > 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def test_the_kit_plays_from_webhooks(sdk_server: Server) -> None:
    """``--webhook``: no socket; it wakes on the signed your_turn, verified."""
    summary = await kit(
        *("--server", sdk_server.url, "--engine", engine("easy"), "--create", "--vs", "easy"),
        *("--rule", "target=30", "--webhook", f"127.0.0.1:{_free_port()}", "--poll", "1"),
    )
    [table] = summary["tables"]
    assert [m["match_number"] for m in table["matches"]] == [1]
    view = await table_of(sdk_server, table["table_id"])
    assert view["game"]["match"]["status"] == "finished"
    # Its turns came by webhook, each verified by the bot (none refused). How many: a match to
    # 30 can end in one hand, after a single turn of the bot's (seen: 0 to 56 with one).
    webhooks = summary["webhooks"]
    assert webhooks["your_turn"] >= 1
    assert webhooks["refused"] == 0
