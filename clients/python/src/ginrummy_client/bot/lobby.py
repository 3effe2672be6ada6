"""The lobby as a table source (docs/lobby.md): challenges to accept, seeks to keep open.

``Lobby`` listens on the player's socket. On ``challenge_received`` it accepts while the kit
has a free table and the challenge passes its ``ChallengeFilter``, else declines it with the
reason the server knows (``later``, ``rules``, ``rated``, ``casual``, ``too_fast``,
``too_slow``). On ``seek_paired`` it yields the table at once. Its seeks (``seek``: one body
of ``POST /v1/seeks`` each) are posted while the kit has free tables and reposted after each
pairing or closing; a refusal for a cap (``too_many_seeks``, ``too_many_live_games``, ...) or
a 429 backs that seek off (``Retry-After``, else doubling from ``BACKOFF`` seconds up to
``BACKOFF_MAX``; a cap's, until a table of the kit's ends), a bad seek (422) is dropped. Its
open seeks are cancelled when it ends: after ``games`` tables (0: never), or when the kit is
stopped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from ginrummy_client.rest import ApiError, Client
from ginrummy_client.sockets import PlayerSocket

log = logging.getLogger(__name__)

JSON = dict[str, Any]

BACKOFF = 5.0
BACKOFF_MAX = 300.0
# How often, at most, free capacity is looked at again with no message coming.
TICK = 1.0
# How often the open challenges to the account are read (those sent while no socket was up).
SWEEP = 10.0


@dataclass
class ChallengeFilter:
    """The challenges the kit accepts: ``presets`` (empty: any), rated and/or casual, and
    ``speeds`` (``live``, ``correspondence``)."""

    presets: list[str] = field(default_factory=list)
    rated: bool = True
    casual: bool = True
    speeds: list[str] = field(default_factory=lambda: ["live", "correspondence"])

    def refusal(self, challenge: JSON) -> str | None:
        """The decline reason for ``challenge`` (a seek row), or None to accept it."""
        game = challenge["game"]
        if self.presets and game["preset"] not in self.presets:
            return "rules"
        if game["rated"] and not self.rated:
            return "casual"
        if not game["rated"] and not self.casual:
            return "rated"
        if game["speed"] not in self.speeds:
            return "too_fast" if game["speed"] == "live" else "too_slow"
        return None


@dataclass
class _Wanted:
    """One seek of the config: its open seek's id, and when it may be posted again."""

    body: JSON
    seek_id: str | None = None
    not_before: float = 0.0
    backoff: float = BACKOFF
    dropped: bool = False
    capped: bool = False  # put off for a cap: retried as soon as a table ends


class Lobby:
    """Challenges (``accept``: a filter, None to leave them alone) and ``seeks``; ``free`` says
    how many more tables the kit can play now (the kit sets it)."""

    def __init__(
        self,
        accept: ChallengeFilter | None = None,
        seeks: list[JSON] | None = None,
        *,
        games: int = 0,
        free: Callable[[], int] = lambda: 1,
    ) -> None:
        self.accept = accept
        self.wanted = [_Wanted(dict(body)) for body in seeks or []]
        self.games = games
        self.free = free
        self.yielded: set[str] = set()
        self.declined: list[tuple[str, str]] = []
        self.notes: PlayerSocket | None = None
        self.me: str | None = None
        self.answered: set[str] = set()
        self.free_before = 0

    async def tables(self, api: Client) -> AsyncIterator[str]:
        self.notes = PlayerSocket(api)
        try:
            async with self.notes as notes:
                swept = 0.0
                while not self.done():
                    if self.accept is not None and time.monotonic() - swept >= SWEEP:
                        swept = time.monotonic()
                        for row in await self.open_challenges(api):
                            if self.done():
                                break
                            table_id = await self.answer(api, row)
                            if self.fresh(table_id):
                                yield str(table_id)
                        continue
                    await self.post(api)
                    try:
                        note = await asyncio.wait_for(anext(notes), TICK)
                    except TimeoutError:
                        continue
                    table_id = await self.on_note(api, note)
                    if self.fresh(table_id):
                        yield str(table_id)
        finally:
            await self.cancel(api)

    def done(self) -> bool:
        return bool(self.games) and len(self.yielded) >= self.games

    def fresh(self, table_id: str | None) -> bool:
        """Whether ``table_id`` is a table not given yet (and keep it as given)."""
        if table_id is None or table_id in self.yielded:
            return False
        self.yielded.add(table_id)
        return True

    async def on_note(self, api: Client, note: JSON) -> str | None:
        """Handle one message: the table to play, if it brings one."""
        kind = note["type"]
        if kind == "seek_paired":
            for wanted in self.wanted:
                if wanted.seek_id == note["seek"]["seek_id"]:
                    wanted.seek_id = None
            return str(note["table_id"])
        if kind == "seek_closed":
            for wanted in self.wanted:
                if wanted.seek_id == note["seek_id"]:
                    wanted.seek_id = None
                    if note.get("reason", "") and str(note["reason"]).startswith("too_many"):
                        wanted.capped = True
                        self.back_off(wanted, None)
            return None
        if kind == "challenge_received" and self.accept is not None:
            return await self.answer(api, note)
        return None

    async def open_challenges(self, api: Client) -> list[JSON]:
        """The open challenges to the account (one at a time answered, each seeing how many
        tables are free then)."""
        try:
            if self.me is None:
                self.me = str((await api.me())["id"])
            rows = await api.my_seeks()
        except (ApiError, httpx.TransportError) as exc:
            log.info("reading the open challenges: %s", exc)
            return []
        return [r for r in rows if r["mode"] == "challenge" and r["player"]["id"] != self.me]

    async def answer(self, api: Client, challenge: JSON) -> str | None:
        """Accept ``challenge`` (its table) or decline it with a reason."""
        seek_id = str(challenge["seek_id"])
        if challenge.get("target") is None or challenge["status"] != "open":
            return None
        if seek_id in self.answered:
            return None
        self.answered.add(seek_id)
        assert self.accept is not None
        reason = self.accept.refusal(challenge)
        if reason is None and self.free() <= 0:
            reason = "later"
        try:
            if reason is not None:
                await api.decline_challenge(seek_id, reason)
                self.declined.append((seek_id, reason))
                log.info("declined challenge %s: %s", seek_id, reason)
                return None
            row = await api.accept_challenge(seek_id)
        except ApiError as exc:
            log.info("challenge %s: %s", seek_id, exc)
            if exc.code.startswith("too_many"):  # a cap of the server's: not now
                await self.decline_later(api, seek_id)
            return None
        return str(row["table_id"]) if row.get("table_id") else None

    async def decline_later(self, api: Client, seek_id: str) -> None:
        try:
            await api.decline_challenge(seek_id, "later")
            self.declined.append((seek_id, "later"))
        except (ApiError, httpx.TransportError) as exc:
            log.info("declining challenge %s: %s", seek_id, exc)

    def back_off(self, wanted: _Wanted, seconds: float | None) -> None:
        wait = wanted.backoff if seconds is None else seconds
        wanted.not_before = time.monotonic() + wait
        wanted.backoff = min(BACKOFF_MAX, wanted.backoff * 2)

    async def post(self, api: Client) -> None:
        """Post each wanted seek that is not open, while the kit has free tables."""
        now, free = time.monotonic(), self.free()
        if free > self.free_before:  # a table ended: a cap refused before may allow it now
            for wanted in self.wanted:
                if wanted.capped:
                    wanted.not_before, wanted.capped = 0.0, False
        self.free_before = free
        for wanted in self.wanted:
            if wanted.dropped or wanted.seek_id is not None or wanted.not_before > now:
                continue
            if self.free() <= 0:
                return
            try:
                row = await api.post_seek(**wanted.body)
            except ApiError as exc:
                log.info("seek %s refused: %s", wanted.body, exc)
                if exc.status == 422 or exc.status in (401, 403, 404):
                    wanted.dropped = True
                else:
                    wanted.capped = exc.code.startswith("too_many")
                    self.back_off(wanted, exc.retry_after)
                continue
            except httpx.TransportError as exc:
                log.info("seek %s: server out of reach (%s)", wanted.body, exc)
                self.back_off(wanted, None)
                continue
            wanted.seek_id = str(row["seek_id"])
            wanted.backoff = BACKOFF

    async def cancel(self, api: Client) -> None:
        """Cancel the open seeks (one paired or closed meanwhile answers 409: fine)."""
        for wanted in self.wanted:
            if wanted.seek_id is None:
                continue
            try:
                await api.cancel_seek(wanted.seek_id)
            except (ApiError, httpx.TransportError) as exc:
                log.info("cancelling seek %s: %s", wanted.seek_id, exc)
            wanted.seek_id = None
