"""Where the bot kit finds its tables: each ``Source`` yields the ids of tables its player is
seated at, and the kit plays each one once.

Today's sources are invites to accept, tables to create, the player's socket (``Follow``:
every table whose ``your_turn`` or ``opponent_joined`` it hears, so a bot account plays
wherever it sits) and the bot ladder (``Ladder``: the account says it is available, again and
again, and plays each ladder table the server seats it at). Challenges, seeks and tournaments
plug in the same way: a source that accepts them and yields the table each gives.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from typing import Protocol

from ginrummy_client.bot.config import CreateSpec
from ginrummy_client.rest import Client
from ginrummy_client.sockets import PlayerSocket


class Source(Protocol):
    """Yields table ids to play; the kit stops when every source has ended and every table
    is done."""

    def tables(self, api: Client) -> AsyncIterator[str]: ...


class Invites:
    """Accept each invite code: its table (seat 1)."""

    def __init__(self, codes: list[str]) -> None:
        self.codes = codes

    async def tables(self, api: Client) -> AsyncIterator[str]:
        for code in self.codes:
            offer = await api.invite(code)
            await api.accept(code, offer["table_id"])
            yield str(offer["table_id"])


class Create:
    """Create tables (seat 0); with ``vs``, seat a server bot and start. Without, print the
    table and its invite as a JSON line on stdout for the opponent."""

    def __init__(self, spec: CreateSpec) -> None:
        self.spec = spec

    async def tables(self, api: Client) -> AsyncIterator[str]:
        for _ in range(self.spec.count):
            table = await api.create_table(self.spec.preset, self.spec.rules)
            table_id = str(table["table_id"])
            if self.spec.vs is not None:
                await api.seat_bot(table_id, self.spec.vs)
            else:
                line = {"table_id": table_id, "invite_code": table["invite_code"]}
                sys.stdout.write(json.dumps(line) + "\n")
                sys.stdout.flush()
            yield table_id


class Follow:
    """Every table the player's socket names (``your_turn``, ``opponent_joined``): the tables
    the account sits at, wherever it was seated. Never ends."""

    KINDS = ("your_turn", "opponent_joined")

    def __init__(self) -> None:
        self.notes: PlayerSocket | None = None

    async def tables(self, api: Client) -> AsyncIterator[str]:
        self.notes = PlayerSocket(api)
        async with self.notes as notes:
            async for note in notes:
                if note["type"] in self.KINDS:
                    yield str(note["table_id"])


class Ladder:
    """The bot ladder: says the account is available (``PUT /v1/bots/me/available``) every
    ``renew_every`` seconds the server asks for, and yields the ladder table each answer names
    (the player's socket, ``Follow``, names them too). Never ends; says it is no longer
    available when stopped."""

    def __init__(self) -> None:
        self.renewals = 0

    async def tables(self, api: Client) -> AsyncIterator[str]:
        try:
            while True:
                answer = await api.set_available(True)
                self.renewals += 1
                if answer.get("table_id"):
                    yield str(answer["table_id"])
                await asyncio.sleep(max(0.2, float(answer.get("renew_every", 30.0))))
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(api.set_available(False))
