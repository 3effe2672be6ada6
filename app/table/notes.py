"""Which notifications a change causes: written to the outbox with it and sent live."""

from __future__ import annotations

from datetime import datetime, timedelta

from app.table.commands import Actor
from app.table.model import Change, Loaded, Note


def caused(before: Loaded, after: Loaded, actor: Actor) -> list[Note]:
    """your_turn when the turn passes to a player, opponent_joined, match_finished,
    rematch_offered."""
    table_id = after.table.id
    out: list[Note] = []
    asker = after.table.rematch_offer
    if asker is not None and before.table.rematch_offer is None:
        # The other seat answers: told even when away (a bot's seat never is asked).
        asking, other = after.seat_info(asker), after.seat_info(1 - asker)
        if asking is not None and other is not None and other.player_id is not None:
            player = {"id": asking.player_id, "name": asking.player_name}
            out.append(Note.new(other.player_id, "rematch_offered", table_id, {"player": player}))
    joined = after.seat_info(1)
    if before.seat_info(1) is None and joined is not None and joined.player_id is not None:
        creator = after.seat_info(0)
        if creator is not None and creator.player_id is not None:
            out.append(
                Note.new(
                    creator.player_id,
                    "opponent_joined",
                    table_id,
                    {"player": {"id": joined.player_id, "name": joined.player_name}},
                )
            )
    state = after.state
    if state is None or state is before.state:
        return out
    if state.status == "finished" and (before.state is None or before.state.status != "finished"):
        for info in after.seats:
            if info.player_id is not None:
                out.append(
                    Note.new(
                        info.player_id,
                        "match_finished",
                        table_id,
                        {
                            "winner": state.winner,
                            "reason": state.finish_reason,
                            "final_scores": state.final_scores,
                        },
                    )
                )
        return out
    if state.status == "playing" and state.hand.phase != "over":
        turn = after.seat_info(state.hand.turn)
        if turn is not None and turn.player_id is not None and turn.player_id != actor.player_id:
            out.append(
                Note.new(
                    turn.player_id,
                    "your_turn",
                    table_id,
                    {"hand_number": state.hand.number, "phase": state.hand.phase},
                )
            )
    return out


def time_running_out(loaded: Loaded, change: Change, now: datetime, fraction: float) -> Note | None:
    """The ``time_running_out`` notice of a turn that ``change`` starts on a clocked table: due
    when ``fraction`` of the turn's time is left (``notify_time_running_out``), for the person
    to move. The dispatcher drops it (``stale``) if the deadline has changed by then."""
    clock = change.clock
    if fraction <= 0 or clock is None or clock.deadline is None:
        return None
    seat, since = clock.state.get("seat"), clock.state.get("since")
    if seat is None or clock.state.get("expired") is not None:
        return None
    before = loaded.clock
    if before is not None and before.get("seat") == seat and before.get("since") == since:
        return None  # the same turn goes on
    info = next((s for s in [*change.seats, *loaded.seats] if s.seat == seat), None)
    if info is None or info.player_id is None:
        return None
    left = (clock.deadline - now).total_seconds() * fraction
    return Note.new(
        info.player_id,
        "time_running_out",
        loaded.table.id,
        {"seat": seat, "deadline": clock.deadline.isoformat(), "remaining_seconds": round(left, 3)},
        not_before=clock.deadline - timedelta(seconds=left),
    )
