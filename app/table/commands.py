"""Commands: what a player may ask of a table. Each decides a ``Change`` from a loaded table.

``decide`` is pure (the pipeline supplies a fresh seed); the engine validates every move, and
these only add the table's own rules: who sits where, who starts, when a rematch may begin.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol, get_args

from app.bots import DISPLAY_NAMES
from app.engine import Action, Event, Ruleset, apply, new_match
from app.errors import ConflictError, ForbiddenError, InvalidError
from app.table.model import Change, Loaded, SeatInfo, TableRow

# The deck designs a seat may choose, listed once: the schema (``app.api.http.schemas.tables``)
# takes the type, and the OpenAPI with it.
DeckDesign = Literal["classic", "royal", "neon", "forest"]
DECK_DESIGNS: tuple[DeckDesign, ...] = get_args(DeckDesign)
CHAT_MAX = 500


@dataclass(frozen=True, slots=True)
class Actor:
    """Who submits a command: a player (by id and name), or the bot of one seat.

    A bot actor exists only inside the server (``Actor.bot``): no token resolves to one, and it
    holds its seat only while that seat has a bot (``seat_of``).
    """

    player_id: str
    name: str
    bot_seat: int | None = None

    @classmethod
    def bot(cls, seat: int, level: str) -> Actor:
        """The actor of the bot in ``seat`` (its id can be no player's: those are hex)."""
        return cls(f"bot:{seat}", DISPLAY_NAMES.get(level, level), bot_seat=seat)


def seat_of(loaded: Loaded, actor: Actor | None) -> int | None:
    """The seat ``actor`` holds at the table: a player's own, or a bot actor's bot seat."""
    if actor is None:
        return None
    if actor.bot_seat is not None:
        info = loaded.seat_info(actor.bot_seat)
        return actor.bot_seat if info is not None and info.bot_level is not None else None
    return loaded.seat_of(actor.player_id)


@dataclass(frozen=True, slots=True)
class Context:
    loaded: Loaded
    actor: Actor
    seat: int | None
    seed: str
    # The server's time of the decision, and how long a seat to move may stay silent before
    # the waiting seat may claim the match (``app.table.clock``).
    now: datetime
    abandon_after: timedelta = timedelta(days=14)


class Command(Protocol):
    def decide(self, ctx: Context) -> Change: ...


def _seated(ctx: Context) -> int:
    if ctx.seat is None:
        raise ForbiddenError("not_seated", "you do not hold a seat at this table")
    return ctx.seat


@dataclass(frozen=True, slots=True)
class Play:
    """An engine action: a move of the hand, next hand, or resign."""

    action: Action

    def decide(self, ctx: Context) -> Change:
        seat = _seated(ctx)
        state = ctx.loaded.state
        if state is None:
            raise ConflictError("match_not_started", "the match has not started")
        new, events = apply(state, seat, self.action)
        return Change(events, state=new, status="finished" if new.status == "finished" else None)


@dataclass(frozen=True, slots=True)
class Join:
    """Take seat 1 (the invite was already checked by the caller)."""

    deck_design: str = DECK_DESIGNS[0]

    def decide(self, ctx: Context) -> Change:
        if ctx.seat is not None:
            raise ConflictError("already_seated", f"you already hold seat {ctx.seat}")
        if ctx.loaded.seat_info(1) is not None:
            raise ConflictError("table_full", "both seats are taken; open the table to watch")
        seat = SeatInfo(1, ctx.actor.player_id, ctx.actor.name, None, self.deck_design)
        event = Event(
            "player_joined",
            {
                "seat": 1,
                "player": {"id": ctx.actor.player_id, "name": ctx.actor.name},
                "deck_design": self.deck_design,
            },
        )
        return Change([event], seats=[seat], status="ready")


def _start(ctx: Context) -> Change:
    rules = Ruleset.from_dict(ctx.loaded.table.rules)
    state, events = new_match(rules, ctx.seed)
    number = ctx.loaded.table.match_number + 1
    started = Event("match_started", {"match_number": number, "rules": rules.to_dict()})
    return Change(
        [started, *events], state=state, new_match=True, status="playing", rematch_offer=None
    )


@dataclass(frozen=True, slots=True)
class Start:
    """The creator (seat 0) starts the first match once both seats are taken."""

    def decide(self, ctx: Context) -> Change:
        if _seated(ctx) != 0:
            raise ForbiddenError(
                "not_creator", "only the table's creator (seat 0) starts the match"
            )
        if ctx.loaded.table.match_number:
            raise ConflictError("match_already_started", "the match has started already")
        if ctx.loaded.seat_info(1) is None:
            raise ConflictError("waiting_for_opponent", "seat 1 is empty: share the invite first")
        return _start(ctx)


def _match_over(ctx: Context) -> int:
    """The caller's seat, once the match is over and the other seat is taken."""
    seat = _seated(ctx)
    state = ctx.loaded.state
    if state is None or state.status != "finished":
        raise ConflictError("match_not_finished", "a rematch needs the current match to be over")
    if ctx.loaded.seat_info(1 - seat) is None:
        raise ConflictError("waiting_for_opponent", "the other seat is empty: nobody to play")
    return seat


@dataclass(frozen=True, slots=True)
class Rematch:
    """A seated player asks for a new match at the same table once the last one is over.

    The other seat answers (``AnswerRematch``). A bot seat agrees at once, and so does a player
    who had asked too: then the new match starts with this command.
    """

    def decide(self, ctx: Context) -> Change:
        seat = _match_over(ctx)
        offer = ctx.loaded.table.rematch_offer
        if offer == seat:
            raise ConflictError(
                "rematch_already_offered", "you asked for a rematch already: wait for the answer"
            )
        other = ctx.loaded.seat_info(1 - seat)
        if offer == 1 - seat or (other is not None and other.bot_level is not None):
            return _start(ctx)
        return Change([Event("rematch_offered", {"seat": seat})], rematch_offer=seat)


@dataclass(frozen=True, slots=True)
class AnswerRematch:
    """The other seat accepts the rematch asked for (the new match starts) or declines it."""

    accept: bool

    def decide(self, ctx: Context) -> Change:
        seat = _match_over(ctx)
        if ctx.loaded.table.rematch_offer != 1 - seat:
            raise ConflictError("no_rematch_offer", "your opponent has not asked for a rematch")
        if self.accept:
            return _start(ctx)
        return Change([Event("rematch_declined", {"seat": seat})], rematch_offer=None)


# The actor of a tournament's scheduler (``app.service.workers.tournaments``): no token
# resolves to it (players' ids are hex).
SCHEDULER = Actor("tournament", "tournament")


@dataclass(frozen=True, slots=True)
class Begin:
    """A tournament's scheduler starts the match of a table it paired (both seats taken)."""

    def decide(self, ctx: Context) -> Change:
        if ctx.actor != SCHEDULER:
            raise ForbiddenError("not_scheduler", "only the tournament starts a paired table")
        if ctx.loaded.table.match_number:
            raise ConflictError("match_already_started", "the match has started already")
        if ctx.loaded.seat_info(1) is None:
            raise ConflictError("waiting_for_opponent", "seat 1 is empty")
        return _start(ctx)


BOT_SEAT = 1


def seat_event(table: TableRow, info: SeatInfo) -> Event:
    """The log's entry for a seat a tournament's table opens with."""
    bot = info.bot_level
    name = info.player_name if bot is None else DISPLAY_NAMES.get(bot, bot)
    who: dict[str, Any] = {"id": info.player_id, "name": name}
    if info.seat == 0:
        data = {"preset": table.preset, "rules": table.rules, "seat": 0, "player": who}
        return Event("table_created", {**data, "deck_design": info.deck_design})
    if bot is not None:
        return Event("bot_seated", {"seat": 1, "bot": {"level": bot, "name": name}})
    return Event("player_joined", {"seat": 1, "player": who, "deck_design": info.deck_design})


def _creator(ctx: Context, doing: str) -> None:
    if ctx.seat != 0 or ctx.actor.bot_seat is not None:
        raise ForbiddenError("not_creator", f"only the table's creator (seat 0) {doing}")


def _between_matches(ctx: Context, doing: str) -> None:
    state = ctx.loaded.state
    if state is not None and state.status != "finished":
        raise ConflictError(
            "match_in_progress", f"a match is being played: {doing} once it is over"
        )


def _bot_event(kind: str, level: str) -> Event:
    return Event(kind, {"seat": BOT_SEAT, "bot": {"level": level, "name": DISPLAY_NAMES[level]}})


@dataclass(frozen=True, slots=True)
class SeatBot:
    """The creator seats a bot of ``level`` in the empty seat 1, or changes its level.

    The level only changes between matches (seed 002): a match is finished against the
    opponent it started with.
    """

    level: str

    def decide(self, ctx: Context) -> Change:
        _creator(ctx, "seats a bot")
        if self.level not in DISPLAY_NAMES:
            levels = ", ".join(DISPLAY_NAMES)
            raise InvalidError("invalid_bot_level", f"bot level must be one of {levels}")
        info = ctx.loaded.seat_info(BOT_SEAT)
        if info is not None and info.bot_level is None:
            raise ConflictError("table_full", "seat 1 holds a player, not a bot")
        _between_matches(ctx, "change the bot's level")
        if info is not None and info.bot_level == self.level:
            raise ConflictError("bot_unchanged", f"the bot already plays at {self.level}")
        design = DECK_DESIGNS[0] if info is None else info.deck_design
        seat = SeatInfo(BOT_SEAT, None, None, self.level, design)
        status = "ready" if info is None else None
        return Change([_bot_event("bot_seated", self.level)], seats=[seat], status=status)


@dataclass(frozen=True, slots=True)
class RemoveBot:
    """The creator empties the bot's seat between matches, so a player may join again."""

    def decide(self, ctx: Context) -> Change:
        _creator(ctx, "removes the bot")
        info = ctx.loaded.seat_info(BOT_SEAT)
        if info is None or info.bot_level is None:
            raise ConflictError("no_bot", "seat 1 holds no bot")
        _between_matches(ctx, "remove the bot")
        return Change(
            [_bot_event("bot_removed", info.bot_level)], vacated=[BOT_SEAT], status="waiting"
        )


@dataclass(frozen=True, slots=True)
class ChooseDeck:
    """A seat's deck design, shown to everyone for that seat."""

    design: str

    def decide(self, ctx: Context) -> Change:
        seat = _seated(ctx)
        if self.design not in DECK_DESIGNS:
            raise InvalidError("invalid_deck_design", f"deck design must be one of {DECK_DESIGNS}")
        event = Event("deck_chosen", {"seat": seat, "design": self.design})
        return Change([event], deck_designs={seat: self.design})


SEATS = (0, 1)


@dataclass(frozen=True, slots=True)
class Chat:
    """A chat line (1-500 characters after trimming) between the two seats, also logged.

    The table's chat is its players': only a seat may speak, and only the seats see the line
    (spectators receive its seq as a ``skip``), as at a table where the players talk and the
    onlookers keep quiet and cannot kibitz. A line is never in a hand's history.
    """

    text: str

    def decide(self, ctx: Context) -> Change:
        seat = ctx.seat
        if seat is None:
            raise ForbiddenError(
                "not_seated", "only the two players chat at a table; spectators watch"
            )
        text = self.text.strip()
        if not 1 <= len(text) <= CHAT_MAX:
            raise InvalidError("invalid_chat", f"a chat line has 1 to {CHAT_MAX} characters")
        line = {
            "seat": seat,
            "player": {"id": ctx.actor.player_id, "name": ctx.actor.name},
            "text": text,
        }
        event = Event("chat", {}, dict.fromkeys(SEATS, line))
        return Change([event], chat=(ctx.actor.player_id, text), bumps_version=False)
