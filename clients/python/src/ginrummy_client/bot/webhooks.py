"""The bot kit's webhook mode: no socket; the server POSTs ``your_turn`` and the bot wakes.

    ginrummy-bot --create --vs easy --webhook 127.0.0.1:9100 [--poll 10]

It listens on ``HOST:PORT`` (a small HTTP server, uvicorn with a bare ASGI app; the
``webhooks`` extra installs both), registers ``url`` (default ``http://HOST:PORT/``) as its
player's webhook (``PUT /v1/players/me/webhook``), and verifies every POST with the secret it
got back (the Standard Webhooks signature, by the ``standardwebhooks`` library; a request that
fails is answered 401 and ignored). On a notification about a table it plays (``your_turn``,
``opponent_joined``, ``match_finished``, a digest) it loads its events and view and plays as in
socket mode.

A hand the opponent ends sends no ``your_turn`` (either seat may deal the next one), so each
table is also looked at every ``poll`` seconds; against a person who deals, or a hand the bot
ends itself, that look is never needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import defaultdict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ginrummy_client.bot.table import TablePlayer
from ginrummy_client.rest import Client

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Listener:
    """An ASGI app that verifies each webhook and queues the notifications it carries, by the
    table they are about (a digest wakes every table)."""

    def __init__(self) -> None:
        self.secret: str | None = None
        self.queues: defaultdict[str, asyncio.Queue[dict[str, Any]]] = defaultdict(asyncio.Queue)
        # Verified notifications by type, and requests refused (bad signature).
        self.counts: dict[str, int] = {"refused": 0}
        self._server: Any = None
        self._serving: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The ``webhooks`` extra: imported only in webhook mode.
        from standardwebhooks.webhooks import (  # noqa: PLC0415
            Webhook,
            WebhookVerificationError,
        )

        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        status = 204
        try:
            if self.secret is None or scope["method"] != "POST":
                raise WebhookVerificationError("not ready")
            Webhook(self.secret).verify(body, headers, json_parse=False)
            note = json.loads(body)
            self.counts[note["type"]] = self.counts.get(note["type"], 0) + 1
            table_id = note.get("data", {}).get("table_id")
            for key, queue in self.queues.items():
                if table_id in (None, key) or note.get("type") == "your_turn_digest":
                    queue.put_nowait(note)
        except (WebhookVerificationError, ValueError, KeyError, TypeError, AttributeError):
            self.counts["refused"] += 1
            status = 401
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def start(self, api: Client, listen: str, url: str | None) -> None:
        """Listen on ``listen`` (HOST:PORT) and register ``url`` as the player's webhook."""
        import uvicorn  # noqa: PLC0415 (the ``webhooks`` extra)

        host, _, port = listen.rpartition(":")
        config = uvicorn.Config(
            self, host=host or "127.0.0.1", port=int(port), log_level="warning", lifespan="off"
        )
        server = self._server = uvicorn.Server(config)
        # Ctrl-C stops the bot, not just its listener.
        server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
        self._serving = asyncio.create_task(server.serve())
        while not server.started:
            if self._serving.done():
                self._serving.result()
            await asyncio.sleep(0.01)
        registered = await api.set_webhook(url or f"http://{host}:{port}/")
        self.secret = registered["webhook_secret"]

    async def stop(self) -> None:
        if self._server is not None and self._serving is not None:
            self._server.should_exit = True
            await self._serving


async def play(player: TablePlayer, listener: Listener, poll: float) -> list[dict[str, Any]]:
    """Play ``player``'s table from webhooks until its matches are over: the results."""
    queue = listener.queues[player.table_id]
    try:
        while True:
            await player.load_events()
            if await player.step():
                return player.results
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(poll):
                    await queue.get()
    finally:
        listener.queues.pop(player.table_id, None)
