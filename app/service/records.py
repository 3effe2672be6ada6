"""Match records: a finished match as one self-contained document anyone can verify.

A match is named ``{table_id}-{match_number}`` (table ids are hex, so the last ``-`` splits it).
The record (``docs/schemas/match-record.schema.json``; ``app.engine.verify`` checks one) holds
the rules, the players, the match's secret seed, and per hand its seed, nonce, commitment,
deal, every action in order and the result, then the final scores and bonuses. It opens only
once the match is over (409 ``match_not_finished`` before), since it reveals every card.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import orjson
from sqlalchemy import or_, select

from app.bots import DISPLAY_NAMES
from app.engine import Event, MatchState
from app.engine.game import ABORTED, FORFEIT
from app.engine.state import NEXT_HAND
from app.engine.verify import FORMAT, VERSION
from app.errors import ConflictError, NotFoundError
from app.store import Database, tables
from app.store import records as store
from app.store.models import EventRow, FinishedMatch

# The event each player action leaves in the log, and the action it stands for.
_ACTION_OF_EVENT = {
    "upcard_taken": "take_upcard",
    "upcard_passed": "pass",
    "drew_stock": "draw_stock",
    "drew_discard": "draw_discard",
    "discarded": "discard",
    "knocked": "knock",
    "big_gin": "big_gin",
    "resigned": "resign",
    "timed_out": FORFEIT,
}
_WITH_CARD = ("discard", "knock")


def match_id(table_id: str, match_number: int) -> str:
    return f"{table_id}-{match_number}"


def parse_match_id(value: str) -> tuple[str, int]:
    """(table id, match number) of a match id; NotFoundError when it names no match."""
    table_id, _, number = value.rpartition("-")
    if not table_id or not number.isdigit() or not 1 <= int(number) <= 2**31 - 1:
        raise NotFoundError("match_not_found", f"no match {value!r}")
    return table_id, int(number)


async def match_record(db: Database, value: str) -> dict[str, Any]:
    """The record of finished match ``value``; 404 for no such match, 409 while it is played."""
    table_id, number = parse_match_id(value)
    async with db.read() as session:
        loaded = await tables.load(session, table_id)
        state = None if loaded is None else await tables.load_match_state(session, table_id, number)
        if loaded is None or state is None:
            raise NotFoundError("match_not_found", f"no match {value!r}")
        if state.status != "finished":
            raise ConflictError(
                "match_not_finished",
                f"match {value} is still being played; its record opens when it ends",
            )
        if state.finish_reason == ABORTED:
            raise NotFoundError(
                "match_not_found", f"match {value} was aborted before a first move: no record"
            )
        finished = await store.finished_match(session, table_id, number)
        rows = await store.match_rows(session, table_id, number)
        seats = _seat_ids(finished)
        names = await store.names(session, [pid for pid, _ in seats])
    return build(
        table_id=table_id,
        number=number,
        preset=loaded.table.preset,
        rated=loaded.table.rated,
        state=state,
        finished=finished,
        seats=seats,
        names=names,
        rows=rows,
    )


def _seat_ids(finished: FinishedMatch | None) -> list[tuple[str | None, str | None]]:
    if finished is None:
        return [(None, None), (None, None)]
    return [
        (finished.seat0_player_id, finished.seat0_bot_level),
        (finished.seat1_player_id, finished.seat1_bot_level),
    ]


def build(
    *,
    table_id: str,
    number: int,
    preset: str,
    rated: bool,
    state: MatchState,
    finished: FinishedMatch | None,
    seats: list[tuple[str | None, str | None]],
    names: dict[str, str],
    rows: Sequence[EventRow],
) -> dict[str, Any]:
    """The record document from a finished match's state and its log."""
    hands: list[dict[str, Any]] = []
    for row in rows:
        event = Event.from_dict(row.data)
        public = event.public
        if event.type == "hand_started":
            if hands:
                hands[-1]["actions"].append({"kind": NEXT_HAND})
            assert row.secret is not None
            hands.append(
                {
                    "number": public["hand_number"],
                    "dealer": public["dealer"],
                    "seed": None,
                    "nonce": None,
                    "commitment": public["commitment"],
                    "deal": {
                        "hands": [event.private[0]["hand"], event.private[1]["hand"]],
                        "upcard": public["upcard"],
                        "stock": row.secret["stock"],
                    },
                    "actions": [],
                    "result": None,
                }
            )
        elif event.type in _ACTION_OF_EVENT and hands:
            kind = _ACTION_OF_EVENT[event.type]
            action: dict[str, Any] = {"seat": public["seat"], "kind": kind}
            if kind in _WITH_CARD:
                action["card"] = public["card"]
            if kind == FORFEIT:
                action["reason"] = public["reason"]
            hands[-1]["actions"].append(action)
        elif event.type == "hand_over" and hands:
            hands[-1]["result"] = public
            hands[-1]["seed"], hands[-1]["nonce"] = public["seed"], public["nonce"]
    if hands and hands[-1]["seed"] is None:
        # Resigned mid-hand: the hand's seed is revealed now the match is over.
        hands[-1]["seed"], hands[-1]["nonce"] = state.hand.seed, state.hand.nonce
    players = []
    for seat, (player_id, bot) in enumerate(seats):
        players.append(
            {
                "seat": seat,
                "player": None
                if player_id is None
                else {"id": player_id, "name": names.get(player_id)},
                "bot": None if bot is None else {"level": bot, "name": DISPLAY_NAMES.get(bot)},
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "match_id": match_id(table_id, number),
        "table_id": table_id,
        "match_number": number,
        "preset": preset,
        "rated": rated,
        "rules": state.rules.to_dict(),
        "players": players,
        "match_seed": state.seed,
        "hands": hands,
        "result": {
            "winner": state.winner,
            "reason": state.finish_reason,
            "scores": list(state.scores),
            "bonuses": state.bonuses,
            "final_scores": state.final_scores,
        },
        "finished_at": None if finished is None else finished.finished_at.isoformat(),
    }


async def export(db: Database, player_id: str) -> AsyncIterator[bytes]:
    """Every finished match of the player as NDJSON, oldest first, one record per line."""
    async with db.read() as session:
        query = (
            select(FinishedMatch.table_id, FinishedMatch.match_number)
            .where(
                or_(
                    FinishedMatch.seat0_player_id == player_id,
                    FinishedMatch.seat1_player_id == player_id,
                )
            )
            .order_by(FinishedMatch.finished_at, FinishedMatch.table_id)
        )
        matches = [(row[0], row[1]) for row in await session.execute(query)]
    for table_id, number in matches:
        record = await match_record(db, match_id(table_id, number))
        yield orjson.dumps(record) + b"\n"
