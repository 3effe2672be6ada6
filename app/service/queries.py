"""The read side of the tables service: a table's view, its log, a finished hand, the history.

Nothing here writes: ``TableService`` (``app.service.pipeline``) adds the command pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.bots import DISPLAY_NAMES
from app.engine import Event
from app.engine.cards import codes, commitment
from app.engine.deal import deal_hand
from app.engine.replay import Step, replay, start_of_hand
from app.engine.state import MatchState
from app.engine.views import arranged_hand
from app.errors import ConflictError, NotFoundError
from app.service import ratings
from app.service.records import parse_match_id
from app.store import Database, tables
from app.store.log import events_since, finished_matches, hand_rows, match_events
from app.store.models import EventRow
from app.store.records import finished_match
from app.table import clock as clocks
from app.table import views
from app.table.commands import Actor, seat_of
from app.table.model import Loaded, StoredEvent
from app.table.time import utcnow


@dataclass(frozen=True, slots=True)
class FinishedHand:
    """A finished hand as logged: its events (with their rows), the match as it stood at the
    deal (``start``), the match's state now, and the result (None: ended by a resignation or
    a timeout)."""

    table_id: str
    match: int
    hand: int
    rated: bool
    state: MatchState
    start: MatchState
    events: list[tuple[EventRow, Event]]
    result: dict[str, Any] | None
    seed: str
    nonce: str

    def steps(self) -> list[Step]:
        """Every move of the hand, replayed by the engine (``app.engine.replay``)."""
        return replay(self.start, [e for _, e in self.events])


def replay_steps(done: FinishedHand) -> list[dict[str, Any]]:
    """Each move of a finished hand with the table after it: both hands, the discard pile,
    the stock's size; ``seq`` is the log's event the move wrote first."""
    out = []
    for step in done.steps():
        hand = step.after.hand
        out.append(
            {
                "index": step.index,
                "seq": done.events[step.seen][0].seq,
                "seat": step.seat,
                "action": step.action.to_dict(),
                "phase": step.before.hand.phase,
                "hands": [arranged_hand(m) for m in hand.hands],
                "discard_pile": codes(hand.discard_pile),
                "stock_size": len(hand.stock),
            }
        )
    return out


class TableQueries:
    """The tables' read models over one Database."""

    db: Database
    public_url: str

    async def match_history(
        self, actor: Actor, limit: int, before: str | None = None
    ) -> list[dict[str, Any]]:
        """A page of the actor's finished matches, newest first, from their side of the table:
        at most ``limit``, those after the match ``before`` names (the last ``match_id`` of the
        page before; 404 ``match_not_found`` unless it is one of the actor's finished
        matches)."""
        async with self.db.read() as session:
            after = None
            if before is not None:
                after = await finished_match(session, *parse_match_id(before))
                if after is None or actor.player_id not in (
                    after.seat0_player_id,
                    after.seat1_player_id,
                ):
                    raise NotFoundError("match_not_found", f"no finished match {before!r} of yours")
            rows = await finished_matches(session, actor.player_id, limit=limit, before=after)
            keys = [(m.table_id, m.match_number) for m, _ in rows]
            changes = await ratings.changes_of_matches(session, actor.player_id, keys)
        out = []
        for match, players in rows:
            mine = 0 if match.seat0_player_id == actor.player_id else 1
            theirs = 1 - mine
            opponent = players.get(theirs)
            bot = match.seat1_bot_level if theirs else match.seat0_bot_level
            out.append(
                {
                    "table_id": match.table_id,
                    "match_number": match.match_number,
                    "seat": mine,
                    "opponent": None
                    if opponent is None
                    else {"id": opponent.id, "name": opponent.name},
                    "opponent_bot": None
                    if bot is None
                    else {"level": bot, "name": DISPLAY_NAMES.get(bot)},
                    "result": "win" if match.winner == mine else "loss",
                    "reason": match.reason,
                    "scores": {"you": match.scores[mine], "opponent": match.scores[theirs]},
                    "final_scores": {
                        "you": match.final_scores[mine],
                        "opponent": match.final_scores[theirs],
                    },
                    "finished_at": match.finished_at.isoformat(),
                    "match_id": f"{match.table_id}-{match.match_number}",
                    "rating": changes.get((match.table_id, match.match_number)),
                }
            )
        return out

    async def table_id_by_invite(self, code: str) -> str:
        async with self.db.read() as session:
            table_id = await tables.table_id_by_invite(session, code)
        if table_id is None:
            raise NotFoundError("invite_not_found", "no table has this invite code")
        return table_id

    async def invite(self, code: str) -> dict[str, Any]:
        """What an invite offers, before anyone accepts it: the table, who invites, its rules
        and clock, and whether seat 1 is still free."""
        loaded = await self.load(await self.table_id_by_invite(code))
        table, host, guest = loaded.table, loaded.seat_info(0), loaded.seat_info(1)
        inviter = None
        if host is not None and host.player_id is not None:
            inviter = {"id": host.player_id, "name": host.player_name}
        return {
            "table_id": table.id,
            "inviter": inviter,
            "seat_open": guest is None,
            "status": table.status,
            "preset": table.preset,
            "rated": table.rated,
            "hints": table.hints,
            "rules": table.rules,
            "clock": clocks.clock_view(loaded.clock, utcnow()),
        }

    async def load(self, table_id: str) -> Loaded:
        """The table, its seats and its match state (``loaded.table.version``, ``last_seq``)."""
        loaded = await tables.load_table(self.db, table_id)
        if loaded is None:
            raise NotFoundError("table_not_found", f"no table {table_id!r}")
        return loaded

    async def table_view(self, table_id: str, actor: Actor | None) -> dict[str, Any]:
        """The table as ``actor`` may see it (a seat's view, or a spectator's with None)."""
        return self.render(await self.load(table_id), actor)

    def render(self, loaded: Loaded, actor: Actor | None) -> dict[str, Any]:
        """The table's JSON as ``actor`` may see it (``app.table.views``)."""
        return views.table_view(loaded, seat_of(loaded, actor), utcnow(), self.public_url)

    async def events_since(
        self, table_id: str, since: int, seat: int | None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The log after seq ``since``, each event redacted for ``seat`` (None: spectator)."""
        return [
            views.event_for(stored, seat) for stored in await self.log_since(table_id, since, limit)
        ]

    async def match_events(self, loaded: Loaded, seat: int) -> list[dict[str, Any]]:
        """The events of the current match of ``loaded`` so far (all its hands), each redacted
        for ``seat``: what a bot of that seat has seen (``app.bots.base.Bot``)."""
        if loaded.state is None:
            return []
        table = loaded.table
        async with self.db.read() as session:
            stored = await match_events(session, table.id, table.match_number)
        return [views.event_for(s, seat) for s in stored]

    async def log_since(
        self, table_id: str, since: int, limit: int | None = None
    ) -> list[StoredEvent]:
        """The log after seq ``since``, unredacted: for transport that redacts per recipient."""
        async with self.db.read() as session:
            return await events_since(session, table_id, since, limit)

    async def tables_in_play(self) -> int:
        """How many tables in the database have a match being played."""
        async with self.db.read() as session:
            return await tables.tables_in_play(session)

    async def finished_hand(self, table_id: str, hand: int, match: int | None) -> FinishedHand:
        """A finished hand's log and what its replay needs (404 ``hand_not_found``; 409
        ``hand_not_finished`` while it is being played)."""
        async with self.db.read() as session:
            loaded = await tables.load(session, table_id)
            if loaded is None:
                raise NotFoundError("table_not_found", f"no table {table_id!r}")
            match = loaded.table.match_number if match is None else match
            rows = await hand_rows(session, table_id, match, hand)
            state = await tables.load_match_state(session, table_id, match)
        if not rows or state is None:
            raise NotFoundError("hand_not_found", f"match {match} has no hand {hand}")
        events = [(r, Event.from_dict(r.data)) for r in rows]
        result = next((e.public for _, e in events if e.type == "hand_over"), None)
        resigned = state.status == "finished" and state.hand.number == hand
        if result is None and not resigned:
            raise ConflictError(
                "hand_not_finished",
                f"hand {hand} is still being played; its history opens when it ends",
            )
        start_row, start = events[0]
        assert start.type == "hand_started" and start_row.secret is not None
        seed, nonce = (
            (result["seed"], result["nonce"]) if result else (state.hand.seed, state.hand.nonce)
        )
        dealt, _ = deal_hand(state.rules, seed, nonce, hand, start.public["dealer"])
        history = [h for h in state.history if h["hand_number"] < hand]
        return FinishedHand(
            table_id, match, hand, loaded.table.rated, state, start_of_hand(state.rules, history,
            dealt), events, result, seed, nonce,
        )  # fmt: skip

    async def finished_hand_numbers(self, table_id: str, match: int) -> list[int]:
        """The numbers of the match's finished hands (a last one ended by resignation too)."""
        async with self.db.read() as session:
            state = await tables.load_match_state(session, table_id, match)
        if state is None:
            raise NotFoundError("match_not_found", f"table {table_id!r} has no match {match}")
        numbers = [int(h["hand_number"]) for h in state.history]
        if state.status == "finished" and state.hand.number not in numbers:
            numbers.append(state.hand.number)
        return numbers

    async def hand_history(self, table_id: str, hand: int, match: int | None) -> dict[str, Any]:
        """A finished hand in full: deal, every event, result, seed, nonce and commitment, and
        the replay's steps (``replay_steps``)."""
        done = await self.finished_hand(table_id, hand, match)
        events = done.events
        start_row, start = events[0]
        assert start_row.secret is not None
        result, state = done.result, done.state
        return {
            "table_id": table_id,
            "match_number": done.match,
            "hand_number": hand,
            "ended_by": "hand_over" if result else state.finish_reason,
            "commitment": start.public["commitment"],
            "seed": done.seed,
            "nonce": done.nonce,
            "commitment_valid": commitment(done.seed, done.nonce) == start.public["commitment"],
            "dealer": start.public["dealer"],
            "deal": {
                "hands": [start.private[0]["hand"], start.private[1]["hand"]],
                "upcard": start.public["upcard"],
                "stock": start_row.secret["stock"],
            },
            "events": [{"seq": r.seq, **e.to_dict()} for r, e in events],
            "result": result,
            "dealt": [arranged_hand(m) for m in done.start.hand.hands],
            "steps": replay_steps(done),
        }
