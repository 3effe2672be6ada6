"""The bot kit: one account, one engine, many tables at once.

``BotKit(config).run()`` logs in (the token from the config or its file; else it signs up and
keeps the token in ``token_file``), starts the engine, and plays every table its sources yield
(``sources``: invites, creations, the player's socket, the bot ladder) up to ``concurrency``
at a time, each until its matches are over; every table survives drops and server restarts
(its socket resumes with ``since``) and every call respects ``Retry-After``. It returns each
table's results.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from ginrummy_client.bot import webhooks
from ginrummy_client.bot.config import Config, CreateSpec
from ginrummy_client.bot.engines import Choose, Engine, ProcessEngine, PythonEngine, load_function
from ginrummy_client.bot.lobby import Lobby
from ginrummy_client.bot.sources import Create, Follow, Invites, Ladder, Source
from ginrummy_client.bot.table import TablePlayer
from ginrummy_client.rest import JSON, Client

log = logging.getLogger(__name__)


def make_engine(config: Config, choose: Choose | None = None) -> Engine:
    """The engine the config names: ``choose`` given here, ``choose = "module:function"``, or
    the ``engine`` command."""
    if choose is not None:
        return PythonEngine(choose)
    if config.choose:
        return PythonEngine(load_function(config.choose), config.choose)
    if config.engine:
        return ProcessEngine(config.engine, config.engine_timeout)
    raise ValueError("no engine: give `engine` (a command) or `choose` (module:function)")


def make_sources(config: Config) -> list[Source]:
    sources: list[Source] = []
    if config.invites:
        sources.append(Invites(config.invites))
    sources.extend(Create(spec) for spec in config.create)
    if config.follow or config.ladder:
        sources.append(Follow())
    if config.accept_challenges or config.seek:
        accept = config.challenges if config.accept_challenges else None
        sources.append(Lobby(accept, config.seek, games=config.lobby_games))
    if config.ladder:
        sources.append(Ladder())
    return sources


class BotKit:
    def __init__(
        self,
        config: Config,
        choose: Choose | None = None,
        *,
        sources: list[Source] | None = None,
    ) -> None:
        self.config = config
        self.engine = make_engine(config, choose)
        self.sources = make_sources(config) if sources is None else sources
        self.api = Client(config.server)
        self.players: dict[str, TablePlayer] = {}
        self.listener: webhooks.Listener | None = None
        self._slots = asyncio.Semaphore(max(1, config.concurrency))
        self.playing = 0  # tables yielded and not done
        for source in self.sources:
            if isinstance(source, Lobby):
                source.free = self.free

    def free(self) -> int:
        """How many more tables the kit may play at once now."""
        return max(1, self.config.concurrency) - self.playing

    async def login(self) -> None:
        config = self.config
        token = config.token
        path = Path(config.token_file) if config.token_file else None
        if token is None and path is not None and path.exists():
            token = path.read_text().strip() or None
        if token is not None:
            self.api.token = token
            return
        await self.api.sign_up(config.name, bot=True)
        if path is not None and self.api.token is not None:
            path.write_text(self.api.token + "\n")

    async def run(self) -> JSON:
        """Play until every source has ended and every table is done: a summary."""
        await self.login()
        await self.engine.start()
        tables: list[asyncio.Task[None]] = []
        try:
            if self.config.webhook is not None:
                self.listener = webhooks.Listener()
                hook = self.config.webhook
                await self.listener.start(self.api, hook.listen, hook.url)
            feeds = [asyncio.create_task(self._feed(s, tables)) for s in self.sources]
            await asyncio.gather(*feeds)
            while not all(t.done() for t in tables):
                await asyncio.gather(*tables)
        finally:
            for task in tables:
                task.cancel()
            await asyncio.gather(*tables, return_exceptions=True)
            if self.listener is not None:
                await self.listener.stop()
            await self.engine.stop()
            await self.api.close()
        summary: JSON = {
            "tables": [
                {"table_id": p.table_id, "matches": p.results, "moves": p.moves}
                for p in self.players.values()
            ]
        }
        if self.listener is not None:
            summary["webhooks"] = self.listener.counts
        return summary

    async def _feed(self, source: Source, tables: list[asyncio.Task[None]]) -> None:
        async for table_id in source.tables(self.api):
            if table_id in self.players:
                continue  # already played (or being played)
            player = TablePlayer(
                self.api,
                table_id,
                self.engine,
                matches=self.config.matches,
                delay=self.config.delay,
            )
            self.players[table_id] = player
            self.playing += 1
            tables.append(asyncio.create_task(self._play(player)))

    async def _play(self, player: TablePlayer) -> None:
        try:
            await self._play_in_slot(player)
        finally:
            self.playing -= 1

    async def _play_in_slot(self, player: TablePlayer) -> None:
        async with self._slots:
            if self.listener is not None:
                await webhooks.play(
                    player, self.listener, self.config.webhook.poll if self.config.webhook else 10
                )
            else:
                await player.play()
            log.info("table %s done: %s", player.table_id, player.results)


def play(server: str, choose: Choose, **settings: Any) -> JSON:
    """Run the kit with a Python ``choose(view) -> action`` and ``settings`` (``Config``'s keys;
    ``vs`` and ``rules`` as a shorthand for one table created against a server bot): the
    summary. For a script: it runs its own event loop."""
    vs, rules = settings.pop("vs", None), settings.pop("rules", None)
    config = Config.from_dict({"server": server, **settings})
    if vs is not None:
        config.create.append(CreateSpec(rules=rules or {}, vs=vs))
    return asyncio.run(BotKit(config, choose).run())
