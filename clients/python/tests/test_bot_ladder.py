"""``ginrummy-bot --ladder``: the kit's account says it is available for the bot ladder (it
shows in ``/v1/bots/online``) and keeps saying so while it runs."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import httpx

from ginrummy_client.bot import Follow, Ladder
from ginrummy_client.bot.cli import config_of
from ginrummy_client.bot.kit import make_sources
from tests.api.conftest import Server
from tests.waiting import until

BOT = Path(sys.executable).parent / "ginrummy-bot"


def test_ladder_mode_follows_the_socket_and_says_it_is_available(tmp_path: Path) -> None:
    assert not config_of([]).ladder
    config = config_of(["--ladder"])
    assert config.ladder
    assert [type(s) for s in make_sources(config)] == [Follow, Ladder]
    toml = tmp_path / "bot.toml"
    toml.write_text('ladder = true\nchoose = "mybot:choose"\n')
    assert config_of(["--config", str(toml)]).ladder


async def test_a_ladder_kit_process_is_online_while_it_runs(
    sdk_server: Server, tmp_path: Path
) -> None:
    token = tmp_path / "robo.token"
    engine = f"{sys.executable} -m app.bots.engine --level easy"
    process = await asyncio.create_subprocess_exec(
        BOT, "--server", sdk_server.url, "--name", "RoboLadder", "--token-file", str(token),
        "--engine", engine, "--ladder",
    )  # fmt: skip
    try:
        async with httpx.AsyncClient(base_url=sdk_server.url, timeout=30) as http:

            async def online() -> bool:
                r = await http.get("/v1/bots/online")
                assert r.status_code == 200, r.text
                return "RoboLadder" in [b["name"] for b in r.json()["bots"]]

            await until(online, timeout=60, what="the kit available on the ladder", every=0.2)
    finally:
        process.send_signal(signal.SIGINT)
        await asyncio.wait_for(process.wait(), 30)
