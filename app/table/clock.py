"""Clocks: a table's time control, each seat's time, timeouts and abandonment claims.

A table chooses its time control at creation (``parse_control``): ``none`` (no clock: today's
behaviour), ``per_move`` (each turn within ``seconds``) or ``bank`` (each seat starts with
``seconds``, gains ``bonus`` after each turn it plays, never above ``cap``); and what a timeout
does: ``claim`` (the opponent may claim the match; until they do the late seat may still move),
``forfeit`` (the late seat loses, finish reason ``timeout``) or ``autoplay`` (a bot of
``autoplay_level`` plays the absent seat's turns until its person moves again).

A seat's clock runs only on its turn of a match being played (not between hands, where either
seat may deal, and never for a bot). The arithmetic here is pure: every function gets ``now``
and the clock (a JSON object stored in ``clocks.state``, its deadline in ``clocks.deadline``).
``attach`` gives every change of a clocked table its new clock, in the change's own
transaction. The ``DeadlineRunner`` (``app.service.workers.deadlines``) acts on due deadlines
through the one pipeline, pinned to the version it saw, under a lease per clock, so each
timeout applies exactly once across processes and restarts.

Abandonment, with or without a clock: when the seat to move made no move for
``abandon_after`` (default 14 days), the waiting seat may ``Claim`` the match (finish reason
``abandoned``).

A seat whose time runs out, or that is claimed as abandoned, before it made its first move of
the match has the match aborted instead (``lose``): no winner, no rating, no record.

The shortest controls are the settings ``clock_min_per_move`` and ``clock_min_bank``
(``Minimums``); the schema (``app.api.http.schemas.tables``) and the OpenAPI state them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.bots import DISPLAY_NAMES
from app.engine import Action, Event, MatchState, abort, apply, forfeit
from app.errors import ConflictError, ForbiddenError, InvalidError
from app.table.commands import Actor, Context, seat_of
from app.table.model import Change, ClockWrite, Loaded

CONTROLS = ("none", "per_move", "bank")
POLICIES = ("claim", "forfeit", "autoplay")
MAX_SECONDS = 30 * 86400.0  # a month: correspondence play at its slowest
# An autoplayed seat's turn: its person has this long (or the per-move time, if shorter) to
# come back and move before the bot plays it.
AUTOPLAY_GRACE = 10.0


@dataclass(frozen=True, slots=True)
class Minimums:
    """The shortest time controls a table may choose (settings ``clock_min_per_move`` and
    ``clock_min_bank``): a turn of ``per_move``, the starting time of a ``bank``."""

    per_move: float = 15.0
    bank: float = 60.0


DEFAULT_MINIMUMS = Minimums()


def parse_control(
    raw: dict[str, Any] | None, minimums: Minimums = DEFAULT_MINIMUMS
) -> dict[str, Any] | None:
    """A new table's clock from the creation request (None: no clock); InvalidError if bad."""
    if raw is None or raw.get("control", "none") == "none":
        if raw and set(raw) - {"control"}:
            raise _invalid("a table without a clock takes no other clock field")
        return None
    control = raw.get("control")
    if control not in CONTROLS:
        raise _invalid(f"control must be one of {', '.join(CONTROLS)}")
    seconds = _seconds(raw, "seconds", required=True)
    shortest = minimums.bank if control == "bank" else minimums.per_move
    if seconds < shortest:
        raise _invalid(f"a {control} clock's seconds are at least {shortest:g}")
    bonus = _seconds(raw, "bonus", required=False) if control == "bank" else 0.0
    cap = _seconds(raw, "cap", required=False) if control == "bank" else 0.0
    if control == "bank":
        cap = cap or seconds
        if cap < seconds:
            raise _invalid("a bank's cap is at least its starting seconds")
        if bonus > cap:
            raise _invalid("a bank's bonus is at most its cap")
    elif "bonus" in raw or "cap" in raw:
        raise _invalid("bonus and cap belong to the bank control")
    policy = raw.get("policy", "claim")
    if policy not in POLICIES:
        raise _invalid(f"policy must be one of {', '.join(POLICIES)}")
    level = raw.get("autoplay_level")
    if policy == "autoplay":
        level = level or "medium"
        if level not in DISPLAY_NAMES:
            raise _invalid(f"autoplay_level must be one of {', '.join(DISPLAY_NAMES)}")
    elif level is not None:
        raise _invalid("autoplay_level belongs to the autoplay policy")
    return {
        "control": control,
        "seconds": seconds,
        "bonus": bonus,
        "cap": cap,
        "policy": policy,
        "autoplay_level": level,
        "banks": [seconds, seconds],
        "seat": None,
        "since": None,
        "expired": None,
    }


def _seconds(raw: dict[str, Any], name: str, *, required: bool) -> float:
    value = raw.get(name)
    if value is None and not required:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _invalid(f"{name} is a number of seconds")
    if not 0 < value <= MAX_SECONDS and not (value == 0 and not required):
        raise _invalid(f"{name} is more than 0 and at most {MAX_SECONDS:.0f} seconds")
    return float(value)


def _invalid(message: str) -> InvalidError:
    return InvalidError("invalid_time_control", message)


def running_seat(loaded: Loaded) -> int | None:
    """The seat whose clock runs: the seat to move in a hand being played, if a person."""
    state = loaded.state
    if state is None or state.status != "playing" or state.hand.phase == "over":
        return None
    info = loaded.seat_info(state.hand.turn)
    if info is None or info.bot_level is not None:
        return None
    return state.hand.turn


def _allowance(clock: dict[str, Any], seat: int) -> float:
    return float(clock["seconds"] if clock["control"] == "per_move" else clock["banks"][seat])


def _since(clock: dict[str, Any]) -> datetime | None:
    return None if clock["since"] is None else datetime.fromisoformat(clock["since"])


def deadline(clock: dict[str, Any]) -> datetime | None:
    """When the running seat's time runs out (an autoplayed seat's: after ``AUTOPLAY_GRACE``); None
    with no clock running, or once a ``claim`` timeout waits for the opponent's claim."""
    seat, since = clock["seat"], _since(clock)
    if seat is None or since is None:
        return None
    if clock["expired"] == seat:
        if clock["policy"] != "autoplay":
            return None
        return since + timedelta(seconds=min(clock["seconds"], AUTOPLAY_GRACE))
    return since + timedelta(seconds=_allowance(clock, seat))


def tick(
    clock: dict[str, Any], running: int | None, now: datetime, *, new_match: bool = False
) -> dict[str, Any]:
    """The clock once the seat to move is ``running`` (None: nobody) at ``now``: the seat whose
    turn ended is charged (a bank loses the time used, gains the bonus, up to the cap)."""
    out = dict(clock, banks=list(clock["banks"]))
    if new_match:
        out.update(banks=[clock["seconds"], clock["seconds"]], seat=None, since=None, expired=None)
    seat, since = out["seat"], _since(out)
    if seat == running and since is not None:
        return out
    if seat is not None and since is not None and out["control"] == "bank":
        used = (now - since).total_seconds()
        left = max(0.0, out["banks"][seat] - used)
        out["banks"][seat] = min(out["cap"], left + out["bonus"])
    out["seat"] = running
    out["since"] = None if running is None else now.isoformat()
    if out["expired"] is not None and out["expired"] != running:
        # The late seat's turn is over: its person is back (a claim) or its bot played it.
        out["expired"] = None if out["policy"] != "autoplay" else out["expired"]
    return out


def stopped(clock: dict[str, Any], late: int, now: datetime) -> dict[str, Any]:
    """The clock of a match that ``late`` lost on time: nobody's runs, and ``late``'s stays run
    out, at zero, until a new match (``expired`` with no seat running says so)."""
    done = tick(clock, None, now)
    if done["policy"] != "autoplay":
        done["expired"] = late
    return done


def remaining(clock: dict[str, Any], now: datetime) -> list[float]:
    """Each seat's time left for its current (or next) turn, in seconds."""
    out = [_allowance(clock, s) for s in (0, 1)]
    seat, since = clock["seat"], _since(clock)
    if seat is None and clock["expired"] is not None and clock["policy"] != "autoplay":
        out[clock["expired"]] = 0.0  # a match lost on time (``stopped``)
    if seat is not None and since is not None:
        out[seat] = max(0.0, out[seat] - (now - since).total_seconds())
        if clock["expired"] == seat:
            out[seat] = 0.0
    return [round(x, 3) for x in out]


def clock_view(clock: dict[str, Any] | None, now: datetime) -> dict[str, Any]:
    """The clock as every view shows it: the control, each seat's time left and the deadline,
    as server times, so a client counts down without trusting its own clock."""
    if clock is None:
        return {"control": "none"}  # nothing counts down: the view stays the same over time
    due = deadline(clock)
    return {
        "control": clock["control"],
        "seconds": clock["seconds"],
        "bonus": clock["bonus"],
        "cap": clock["cap"],
        "policy": clock["policy"],
        "autoplay_level": clock["autoplay_level"],
        "running": clock["seat"],
        "remaining": remaining(clock, now),
        "deadline": None if due is None else due.isoformat(),
        "expired": clock["expired"],
        "autoplay": clock["expired"] if clock["policy"] == "autoplay" else None,
        "server_time": now.isoformat(),
    }


def attach(loaded: Loaded, change: Change, actor: Actor, now: datetime) -> None:
    """Give ``change`` the clock it leaves (a clocked table's change of the match only)."""
    clock = loaded.clock
    if clock is None or change.clock is not None or change.state is None:
        return
    if clock["expired"] is not None and seat_of(loaded, actor) == clock["expired"]:
        # The late seat's person moved: no bot, nothing to claim, and a fresh allowance for
        # the rest of their turn (a bank at zero runs out again at once).
        clock = dict(clock, expired=None, since=now.isoformat())
    after = Loaded(loaded.table, loaded.seats, change.state)
    new = tick(clock, running_seat(after), now, new_match=change.new_match)
    change.clock = ClockWrite(new, deadline(new))


@dataclass(frozen=True, slots=True)
class TimeUp:
    """The deadline runner's command: ``seat``'s time ran out; the table's policy applies.

    ``action`` is the autoplay bot's move for that seat (autoplay only). Due or not is decided
    on the table's clock at ``ctx.now``, so a move that arrived first makes this a refusal.
    """

    seat: int
    action: Action | None = None

    def decide(self, ctx: Context) -> Change:
        loaded, clock, state = ctx.loaded, ctx.loaded.clock, ctx.loaded.state
        due = None if clock is None else deadline(clock)
        if clock is None or state is None or clock["seat"] != self.seat or due is None:
            raise ConflictError("not_due", "no clock runs out for that seat")
        if due > ctx.now:
            raise ConflictError("not_due", "the seat still has time")
        policy = clock["policy"]
        expired = Event("time_expired", {"seat": self.seat, "policy": policy})
        if policy == "forfeit" or not state.moved[self.seat]:
            new, events = lose(state, self.seat, "timeout")
            done = stopped(clock, self.seat, ctx.now)
            return Change(
                events, state=new, status="finished", clock=ClockWrite(done, deadline(done))
            )
        if policy == "claim":
            waiting = dict(clock, expired=self.seat)
            return Change([expired], clock=ClockWrite(waiting, deadline(waiting)))
        if self.action is None:
            raise ConflictError("not_due", "autoplay needs the bot's move")
        new, events = apply(state, self.seat, self.action)
        if clock["expired"] != self.seat:
            level = clock["autoplay_level"]
            expired.public["bot"] = {"level": level, "name": DISPLAY_NAMES.get(level)}
            events = [expired, *events]
        playing = dict(clock, expired=self.seat)
        after = Loaded(loaded.table, loaded.seats, new)
        moved = tick(playing, running_seat(after), ctx.now)
        status = "finished" if new.status == "finished" else None
        return Change(events, state=new, status=status, clock=ClockWrite(moved, deadline(moved)))


@dataclass(frozen=True, slots=True)
class Claim:
    """The waiting seat claims the match: its opponent's time ran out (a ``claim`` table), or
    the opponent, to move, made no move for ``ctx.abandon_after`` (any table)."""

    def decide(self, ctx: Context) -> Change:
        seat = ctx.seat
        if seat is None or ctx.actor.bot_seat is not None:
            raise ForbiddenError("not_seated", "only a seated player claims a match")
        loaded, state, clock = ctx.loaded, ctx.loaded.state, ctx.loaded.clock
        if state is None or state.status != "playing":
            raise ConflictError("match_not_in_progress", "no match is being played")
        late = 1 - seat
        if running_seat(loaded) != late:
            raise ConflictError("nothing_to_claim", "it is not your opponent's turn")
        if clock is not None and clock["expired"] == late and clock["policy"] == "claim":
            reason = "timeout"
        elif loaded.moved_at is not None and ctx.now - loaded.moved_at >= ctx.abandon_after:
            reason = "abandoned"
        else:
            raise ConflictError(
                "nothing_to_claim", "your opponent's time has not run out; wait for their move"
            )
        new, events = lose(state, late, reason)
        change = Change(events, state=new, status="finished")
        if clock is not None:
            done = (
                stopped(clock, late, ctx.now) if reason == "timeout" else tick(clock, None, ctx.now)
            )
            change.clock = ClockWrite(done, deadline(done))
        return change


def lose(state: MatchState, seat: int, reason: str) -> tuple[MatchState, list[Event]]:
    """``seat`` loses the match for ``reason``, or, if it made no move of the match yet, the
    match is aborted: no winner, no rating change, no finished-match record (docs/clocks.md).
    As on the big chess servers, a match whose first move was never made has no result, so
    a link to a rated table with a short clock cannot cost a visitor their rating."""
    if state.moved[seat]:
        return forfeit(state, seat, reason)
    return abort(state, seat, reason)
