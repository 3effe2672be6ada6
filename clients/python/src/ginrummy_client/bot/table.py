"""One seat played by an engine: the table's socket says when, the REST API what and how.

It keeps the current match's events the socket brings (after a ``view``, on connect or a resync,
it reads them from ``GET /v1/tables/{id}/events``). Whenever a message may mean it has
something to do (``your_turn``, an opponent joining, a hand or match starting or ending, a
heartbeat, the first message after a reconnect) it fetches its view and, while that view has a
move, asks the engine and posts the move with ``expected_version``: a 409 means the table moved
on, and the next message brings it back. The kit itself deals the next hand, starts a match
once the table is full (at seat 0), and asks for a rematch (or agrees to one asked for) until
``matches`` are played.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import httpx

from ginrummy_client.bot.engines import Engine
from ginrummy_client.rest import JSON, ApiError, Client
from ginrummy_client.sockets import TableSocket

log = logging.getLogger(__name__)

# Besides ``your_turn``: the events after which this seat may have something to do.
STEP_EVENTS = frozenset(
    {"player_joined", "bot_seated", "match_started", "hand_over", "match_over", "rematch_offered"}
)


class TablePlayer:
    """A seat of ``table_id`` played by ``engine`` until ``matches`` matches are over."""

    def __init__(
        self,
        api: Client,
        table_id: str,
        engine: Engine,
        *,
        matches: int = 1,
        delay: float = 0.0,
        on_message: Callable[[JSON], None] | None = None,
    ) -> None:
        self.api = api
        self.table_id = table_id
        self.engine = engine
        self.matches = matches
        self.delay = delay
        self.on_message = on_message
        self.events: list[JSON] = []
        self.results: list[JSON] = []
        self.moves = 0

    async def play(self, socket: TableSocket | None = None) -> list[JSON]:
        """Follow the table's socket and play until the last match is over: each result."""
        socket = socket or TableSocket(self.api, self.table_id)
        connects = 0
        async with socket:
            async for message in socket:
                if self.on_message is not None:
                    self.on_message(message)
                kind = message["type"]
                fresh = socket.connects != connects
                connects = socket.connects
                if kind == "view":
                    await self.load_events()
                elif kind == "event":
                    self.keep(message["event"])
                    if message["event"]["type"] not in STEP_EVENTS and not fresh:
                        continue
                elif kind not in ("your_turn", "heartbeat") and not fresh:
                    continue
                if await self.step():
                    break
        return self.results

    def keep(self, event: JSON) -> None:
        """Keep the events of the current match (every hand: an engine may read its opponent's
        habits from the earlier ones; the current hand's are those from its ``hand_started``)."""
        if event["type"] == "match_started":
            self.events = []
        self.events.append(event)

    async def load_events(self) -> None:
        """This seat's events so far (on connect, or when the socket resyncs with a view)."""
        self.events, since = [], 0
        while batch := await self.api.events(self.table_id, since):
            for event in batch:
                if event["type"] != "skip":
                    self.keep(event)
            since = batch[-1]["seq"]

    async def step(self) -> bool:
        """Make every move this seat has now; True once the last match is over. A server out
        of reach meanwhile is waited for: the socket's reconnect brings the next step."""
        try:
            return await self._step()
        except httpx.TransportError as exc:
            log.info("table %s: server out of reach (%s)", self.table_id, exc)
            return False
        except ApiError as exc:
            if exc.status in (409, 503):
                return False  # the table moved on, or the database blinked: messages follow
            raise

    async def _step(self) -> bool:
        view = await self.api.view(self.table_id)
        while True:
            action = await self.next_action(view)
            if action is None:
                return False
            if action.get("kind") == "done":
                return True
            if self.delay:
                await asyncio.sleep(self.delay)
            path = action.pop("path", None)
            if path is not None:
                result = await self.api.command(
                    self.table_id, path, {"expected_version": view["version"]}
                )
            else:
                result = await self.api.move(self.table_id, action, view["version"])
                self.moves += 1
            view = result["table"]

    async def next_action(self, view: JSON) -> JSON | None:
        """What to do for ``view``: an action, a command (``path``), ``done``, or None."""
        game = view["game"]
        if game is None:
            start = view["status"] == "ready" and view["you"] == 0
            return {"path": "start"} if start else None
        match = game["match"]
        if match["status"] == "finished":
            if not self.results or self.results[-1]["match_number"] != view["match_number"]:
                mine = view["you"]
                self.results.append(
                    {
                        "match_number": view["match_number"],
                        "seat": mine,
                        "winner": match["winner"],
                        "won": match["winner"] == mine,
                        "final_scores": match["final_scores"],
                    }
                )
            if len(self.results) >= self.matches:
                return {"kind": "done"}
            # Asked already: the other seat answers (a rematch it asks for too starts one).
            return None if view.get("rematch_offer") == view["you"] else {"path": "rematch"}
        actions = game["legal"]["actions"]
        if "next_hand" in actions:
            return {"path": "next-hand"}
        if not any(kind != "resign" for kind in actions):
            return None
        action = await self.engine.choose(self.table_id, {**view, "events": self.events})
        return None if action.get("kind") is None else dict(action)
