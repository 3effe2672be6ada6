"""The remote bot's webhook mode: no socket; the server POSTs ``your_turn`` and the bot wakes.

    python -m app.bots.remote --create --vs easy --webhook 127.0.0.1:9100 [--poll 10]

It listens on ``--webhook HOST:PORT`` (a small HTTP server, uvicorn with a bare ASGI app),
registers ``--webhook-url`` (default ``http://HOST:PORT/``) as its player's webhook
(``PUT /v1/players/me/webhook``), and verifies every POST with the secret it got back (the
Standard Webhooks signature, by the ``standardwebhooks`` library; a request that fails is
answered 401 and ignored). On a notification about its table (``your_turn``, ``opponent_joined``,
``match_finished``, a digest) it loads its events and view and plays as in socket mode.

A hand the opponent ends sends no ``your_turn`` (either seat may deal the next one), so the bot
also looks every ``--poll`` seconds; against a person who deals, or a hand the bot ends itself,
that look is never needed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

import orjson
import uvicorn
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

if TYPE_CHECKING:
    from app.bots.remote import RemoteBot

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Listener:
    """An ASGI app that verifies each webhook and queues the notifications it carries."""

    def __init__(self) -> None:
        self.secret: str | None = None
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        # Verified notifications by type, and requests refused (bad signature).
        self.counts: dict[str, int] = {"refused": 0}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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
            note = orjson.loads(body)
            self.counts[note["type"]] = self.counts.get(note["type"], 0) + 1
            self.queue.put_nowait(note)
        except (WebhookVerificationError, ValueError, KeyError, TypeError):
            self.counts["refused"] += 1
            status = 401
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def play(
    bot: RemoteBot, listen: str, url: str | None, poll: float
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Play ``bot``'s table from webhooks until its matches are over; the results and how
    many notifications of each type came (``refused``: failed verification)."""
    host, _, port = listen.rpartition(":")
    listener = Listener()
    config = uvicorn.Config(
        listener, host=host or "127.0.0.1", port=int(port), log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    # Ctrl-C stops the bot, not just its listener.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if serving.done():
                serving.result()
            await asyncio.sleep(0.01)
        registered = await bot.ok(
            "PUT", "/v1/players/me/webhook", {"url": url or f"http://{host}:{port}/"}
        )
        listener.secret = registered["webhook_secret"]
        while True:
            await bot.load_events()
            if await bot.step():
                return bot.results, listener.counts
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(poll):
                    while True:
                        note = await listener.queue.get()
                        if note.get("data", {}).get("table_id") == bot.table_id:
                            break
                        if note.get("type") == "your_turn_digest":
                            break
    finally:
        server.should_exit = True
        await serving
