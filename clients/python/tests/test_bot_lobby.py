"""``ginrummy-bot`` in the lobby: a process that accepts a player's challenge, or keeps a seek
open, and plays the table it gets to its end; and one that declines a challenge its filter
refuses, with the reason."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
import time
import tomllib
import uuid
from pathlib import Path
from typing import Any

from ginrummy_client.bot.config import Config
from ginrummy_client.bot.engines import ProcessEngine
from ginrummy_client.bot.kit import make_sources
from ginrummy_client.bot.lobby import Lobby
from ginrummy_client.bot.table import TablePlayer
from ginrummy_client.rest import ApiError, Client
from ginrummy_client.sockets import LobbySocket
from ginrummy_client.sync import SyncClient
from tests.api.conftest import Server
from tests.waiting import until

BOT = Path(sys.executable).parent / "ginrummy-bot"
SHORT = {"target": 10}


def engine(level: str) -> list[str]:
    return [sys.executable, "-m", "app.bots.engine", "--level", level]


async def start_kit(server: Server, name: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        BOT,
        *("--server", server.url, "--name", name, "--engine", " ".join(engine("easy"))),
        *args,
        stdout=asyncio.subprocess.PIPE,
    )


async def summary_of(process: asyncio.subprocess.Process) -> Any:
    out, _ = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0
    return json.loads(out.decode().splitlines()[-1])


async def human(server: Server) -> Client:
    api = Client(server.url)
    await api.sign_up(f"Human{uuid.uuid4().hex[:6]}")
    return api


async def challenge_when_there(api: Client, name: str, **game: Any) -> Any:
    """Challenge ``name`` once the kit has signed up (404 player_not_found before)."""

    async def attempt() -> Any:
        try:
            return await api.challenge(name, **game)
        except ApiError as exc:
            assert exc.code == "player_not_found", exc
            return None

    return await until(attempt, 60, every=0.2, what=f"{name} signed up")


async def paired(api: Client, seek_id: str, challenge: bool = False) -> str:
    async def table() -> str | None:
        row = await (api.get_challenge if challenge else api.seek)(seek_id)
        assert row["status"] in ("open", "paired"), row
        return row["table_id"] if row["status"] == "paired" else None

    found: str = await until(table, 60, every=0.2, what="paired")
    return found


async def play_out(api: Client, table_id: str) -> list[Any]:
    """The human's seat, played to the match's end by the server's easy level."""
    bot = ProcessEngine(engine("easy"), 30)
    await bot.start()
    try:
        return await asyncio.wait_for(TablePlayer(api, table_id, bot).play(), 120)
    finally:
        await bot.stop()


async def test_the_kit_accepts_a_challenge_and_plays_it(sdk_server: Server) -> None:
    name = f"Kit{uuid.uuid4().hex[:6]}"
    process = await start_kit(sdk_server, name, "--accept-challenges", "--lobby-games", "1")
    async with await human(sdk_server) as api:
        challenge = await challenge_when_there(api, name, rules=SHORT)
        assert challenge["target"]["name"] == name
        table_id = await paired(api, challenge["seek_id"], challenge=True)
        [mine] = await play_out(api, table_id)
        summary = await summary_of(process)
        [table] = summary["tables"]
        assert table["table_id"] == table_id
        [theirs] = table["matches"]
        assert theirs["winner"] == mine["winner"] and theirs["seat"] != mine["seat"]
        assert table["moves"] > 0
        view = await api.view(table_id)
        assert view["game"]["match"]["status"] == "finished"
        assert max(view["game"]["match"]["final_scores"]) >= SHORT["target"]


async def test_the_kit_seeks_is_paired_and_plays(sdk_server: Server) -> None:
    name = f"Kit{uuid.uuid4().hex[:6]}"
    rules = json.dumps(SHORT["target"])
    process = await start_kit(sdk_server, name, "--seek", "--rule", f"target={rules}")
    process_done = False
    try:
        async with await human(sdk_server) as api:

            async def kit_seek() -> Any:
                return [s for s in await api.seeks() if s["player"]["name"] == name]

            [listed] = await until(kit_seek, 60, every=0.2, what="the kit's seek")
            assert listed["game"]["rules"] == SHORT and listed["player"]["bot"]
            seek = await api.post_seek(rules=SHORT, rated=False)
            assert seek["game"]["pool"] == listed["game"]["pool"]
            table_id = await paired(api, seek["seek_id"])
            assert (await api.seek(listed["seek_id"]))["table_id"] == table_id
            [mine] = await play_out(api, table_id)
            view = await api.view(table_id)
            assert view["game"]["match"]["status"] == "finished"
            assert mine["winner"] in (0, 1)
            # Free again: the kit seeks anew, and cancels that seek when it stops.
            [again] = await until(kit_seek, 60, every=0.2, what="the kit's next seek")
            assert again["seek_id"] != listed["seek_id"]
            process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(process.wait(), 60) == 130
            process_done = True
            assert (await api.seek(again["seek_id"]))["status"] == "cancelled"
            assert await kit_seek() == []
    finally:
        if not process_done:
            process.kill()
            await process.wait()


async def test_the_kit_declines_a_challenge_its_filter_refuses(sdk_server: Server) -> None:
    name = f"Kit{uuid.uuid4().hex[:6]}"
    process = await start_kit(
        sdk_server, name, "--accept-challenges", "--casual-only", "--lobby-games", "1"
    )
    try:
        async with await human(sdk_server) as api:
            challenge = await challenge_when_there(api, name, rated=True)

            async def closed() -> Any:
                row = await api.get_challenge(challenge["seek_id"])
                return row if row["status"] != "open" else None

            row = await until(closed, 60, every=0.2, what="an answer")
            assert (row["status"], row["reason"], row["table_id"]) == ("declined", "casual", None)
            # A casual one it takes, and plays.
            casual = await api.challenge(name, rules=SHORT)
            table_id = await paired(api, casual["seek_id"], challenge=True)
            await play_out(api, table_id)
            [table] = (await summary_of(process))["tables"]
            assert table["table_id"] == table_id
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_the_guides_lobby_config_loads_and_its_seeks_are_valid(sdk_server: Server) -> None:
    """docs/sdk.md's lobby config as printed: one Lobby source, and each seek it would post
    is one the server takes."""
    guide = (Path(__file__).resolve().parents[3] / "docs" / "sdk.md").read_text()
    [block] = [b for b in re.findall(r"```toml\n(.*?)```", guide, re.DOTALL) if "seek =" in b]
    config = Config.from_dict(tomllib.loads(block))
    [source] = make_sources(config)
    assert isinstance(source, Lobby) and source.accept is not None
    assert source.accept.refusal({"game": {"preset": "reino", "rated": False}}) == "rules"
    async with await human(sdk_server) as api:
        for body in config.seek:
            seek = await api.post_seek(**body)
            assert seek["status"] == "open"
            assert (await api.cancel_seek(seek["seek_id"]))["status"] == "cancelled"


async def test_the_lobby_socket_brings_seeks_and_the_players_challenges(
    sdk_server: Server,
) -> None:
    """``LobbySocket`` with a token: a seek posted by anyone, a challenge to its player."""
    async with await human(sdk_server) as ana, await human(sdk_server) as bea:
        me = await ana.me()
        async with LobbySocket(ana) as lobby:
            seen: list[Any] = []

            async def heard(kind: str) -> Any:
                while not [m for m in seen if m["type"] == kind]:
                    seen.append(await anext(lobby))
                return next(m for m in seen if m["type"] == kind)

            # The socket is open once its first heartbeat comes (1 s here).
            await asyncio.wait_for(heard("heartbeat"), 30)
            seek = await bea.post_seek(rules=SHORT)
            added = await asyncio.wait_for(heard("seek_added"), 30)
            assert added["seek"]["seek_id"] == seek["seek_id"]
            challenge = await bea.challenge(me["name"], rules=SHORT)
            received = await asyncio.wait_for(heard("challenge_received"), 30)
            assert received["seek_id"] == challenge["seek_id"]
            await bea.cancel_seek(seek["seek_id"])
            await bea.cancel_challenge(challenge["seek_id"])


def test_the_sync_lobby_socket_brings_a_seek(sdk_server: Server) -> None:
    with SyncClient(sdk_server.url) as api:
        api.sign_up(f"Sync{uuid.uuid4().hex[:6]}")
        with api.lobby_socket() as lobby:
            messages = iter(lobby)
            while next(messages)["type"] != "heartbeat":
                pass  # open once its first heartbeat comes
            seek = api.post_seek(rules=SHORT)
            message = next(m for m in messages if m["type"] == "seek_added")
            assert message["seek"]["seek_id"] == seek["seek_id"]
            api.cancel_seek(seek["seek_id"])


async def test_a_seek_refused_for_a_cap_is_put_off_not_retried(sdk_server: Server) -> None:
    """One seek more than LOBBY_MAX_OPEN_SEEKS (5): refused ``too_many_seeks``, put off (not
    posted again at the next look), and the open ones cancelled at the end."""
    async with await human(sdk_server) as api:
        lobby = Lobby(seeks=[{"rules": SHORT}] * 6, free=lambda: 8)
        await lobby.post(api)
        assert len(await api.my_seeks()) == 5
        [refused] = [w for w in lobby.wanted if w.seek_id is None]
        assert refused.capped and refused.not_before > time.monotonic()
        backoff = refused.backoff
        await lobby.post(api)
        assert refused.backoff == backoff and refused.seek_id is None
        # A table of the kit's ending (more free) lets it try at once: refused again.
        lobby.free = lambda: 9
        await lobby.post(api)
        assert refused.backoff == 2 * backoff
        await lobby.cancel(api)
        assert await api.my_seeks() == []


async def test_a_kit_at_its_concurrency_declines_later(sdk_server: Server) -> None:
    """``--concurrency 1``: while it plays one challenge's table, the next is declined
    ``later``; the first it plays to its end (the human's seat too, or it would not end)."""
    name = f"Kit{uuid.uuid4().hex[:6]}"
    process = await start_kit(sdk_server, name, "--accept-challenges", "--concurrency", "1")
    try:
        async with await human(sdk_server) as api:
            first = await challenge_when_there(api, name, rules=SHORT)
            table_id = await paired(api, first["seek_id"], challenge=True)
            second = await api.challenge(name, rules=SHORT)

            async def closed() -> Any:
                row = await api.get_challenge(second["seek_id"])
                return row if row["status"] != "open" else None

            row = await until(closed, 60, every=0.2, what="an answer")
            assert (row["status"], row["reason"]) == ("declined", "later")
            [mine] = await play_out(api, table_id)
            assert mine["winner"] in (0, 1)
            process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(process.wait(), 60) == 130
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
