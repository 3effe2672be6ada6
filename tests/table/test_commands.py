"""The table's commands decided directly: a loaded table in, a Change or a refusal out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.engine import Action, RuleError, legal_actions
from app.errors import ConflictError, ForbiddenError, InvalidError
from app.table.clock import Claim, TimeUp, parse_control
from app.table.commands import (
    Actor,
    AnswerRematch,
    Chat,
    ChooseDeck,
    Command,
    Context,
    Join,
    Play,
    Rematch,
    RemoveBot,
    SeatBot,
    Start,
    seat_of,
)
from app.table.model import Change, Loaded, SeatInfo, TableRow
from app.table.project import finishes, project

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SEED = "11" * 32
HOST = Actor("a" * 32, "Ann")
GUEST = Actor("b" * 32, "Bob")
STRANGER = Actor("c" * 32, "Cy")


def table(
    *seats: SeatInfo, status: str = "waiting", match_number: int = 0, version: int = 1
) -> Loaded:
    row = TableRow(
        "t" * 32, HOST.player_id, "standard", {}, "invite", status, match_number, version, 1,
        T0, False,
    )  # fmt: skip
    return Loaded(row, list(seats), None)


def host_seat() -> SeatInfo:
    return SeatInfo(0, HOST.player_id, HOST.name, None, "classic")


def guest_seat() -> SeatInfo:
    return SeatInfo(1, GUEST.player_id, GUEST.name, None, "royal")


def decide(loaded: Loaded, actor: Actor, command: Command, now: datetime = T0) -> Change:
    context = Context(loaded, actor, seat_of(loaded, actor), SEED, now)
    return command.decide(context)


def apply(loaded: Loaded, change: Change, now: datetime = T0) -> Loaded:
    """The table as ``change`` leaves it, its version and seqs moved on as a commit moves them."""
    after = project(loaded, change, now)
    bump = 1 if change.bumps_version else 0
    row = after.table
    moved = TableRow(
        row.id, row.created_by, row.preset, row.rules, row.invite_code, row.status,
        row.match_number, row.version + bump, row.last_seq + len(change.events),
        row.created_at, row.rated, row.rematch_offer,
    )  # fmt: skip
    return Loaded(moved, after.seats, after.state, after.clock, after.moved_at)


def started() -> Loaded:
    ready = apply(table(host_seat()), decide(table(host_seat()), GUEST, Join("royal")))
    return apply(ready, decide(ready, HOST, Start()))


def test_join_takes_seat_one() -> None:
    change = decide(table(host_seat()), GUEST, Join("neon"))
    assert [e.type for e in change.events] == ["player_joined"]
    assert change.seats == [SeatInfo(1, GUEST.player_id, GUEST.name, None, "neon")]
    assert change.status == "ready"
    assert change.state is None


def test_join_refusals() -> None:
    full = table(host_seat(), guest_seat(), status="ready")
    with pytest.raises(ConflictError) as full_error:
        decide(full, STRANGER, Join())
    assert full_error.value.code == "table_full"
    with pytest.raises(ConflictError) as seated:
        decide(table(host_seat()), HOST, Join())
    assert seated.value.code == "already_seated"


def test_start_deals_the_first_hand_from_the_seed() -> None:
    ready = table(host_seat(), guest_seat(), status="ready")
    change = decide(ready, HOST, Start())
    assert change.new_match and change.status == "playing"
    assert [e.type for e in change.events][:2] == ["match_started", "hand_started"]
    assert change.state is not None and change.state.hand.number == 1
    # The same seed deals the same hand: the decision is a function of its inputs.
    again = decide(ready, HOST, Start())
    assert again.state is not None and again.state.to_dict() == change.state.to_dict()


def test_start_refusals() -> None:
    ready = table(host_seat(), guest_seat(), status="ready")
    with pytest.raises(ForbiddenError) as guest:
        decide(ready, GUEST, Start())
    assert guest.value.code == "not_creator"
    with pytest.raises(ConflictError) as alone:
        decide(table(host_seat()), HOST, Start())
    assert alone.value.code == "waiting_for_opponent"
    with pytest.raises(ForbiddenError) as spectator:
        decide(ready, STRANGER, Start())
    assert spectator.value.code == "not_seated"


def test_play_applies_the_engine_and_refuses_its_rules() -> None:
    loaded = started()
    assert loaded.state is not None
    seat = loaded.state.hand.turn
    actor = HOST if seat == 0 else GUEST
    action = legal_actions(loaded.state, seat)[0]
    change = decide(loaded, actor, Play(action))
    assert change.state is not None and change.state.to_dict() != loaded.state.to_dict()
    assert change.events and not change.new_match
    other = GUEST if actor is HOST else HOST
    with pytest.raises(RuleError):
        decide(loaded, other, Play(action))
    with pytest.raises(ConflictError) as early:
        decide(table(host_seat(), guest_seat(), status="ready"), HOST, Play(Action("draw_stock")))
    assert early.value.code == "match_not_started"


def test_resign_finishes_the_match_once() -> None:
    loaded = started()
    change = decide(loaded, GUEST, Play(Action("resign")))
    assert change.status == "finished"
    assert finishes(loaded, change)
    over = apply(loaded, change)
    with pytest.raises(ForbiddenError):
        decide(over, STRANGER, Rematch())
    asked = decide(over, HOST, Rematch())
    assert [e.type for e in asked.events] == ["rematch_offered"] and not asked.new_match
    offered = apply(over, asked)
    assert offered.table.rematch_offer == 0
    with pytest.raises(ConflictError) as twice:
        decide(offered, HOST, Rematch())
    assert twice.value.code == "rematch_already_offered"
    with pytest.raises(ConflictError) as own:
        decide(offered, HOST, AnswerRematch(accept=True))
    assert own.value.code == "no_rematch_offer"
    declined = apply(offered, decide(offered, GUEST, AnswerRematch(accept=False)))
    assert declined.table.rematch_offer is None and declined.state == over.state
    with pytest.raises(ConflictError) as gone:
        decide(declined, GUEST, AnswerRematch(accept=True))
    assert gone.value.code == "no_rematch_offer"
    # Asking when the other seat has asked already agrees: the new match starts.
    rematch = decide(offered, GUEST, Rematch())
    assert rematch.new_match and rematch.status == "playing" and rematch.rematch_offer is None
    assert not finishes(offered, rematch)
    accepted = decide(offered, GUEST, AnswerRematch(accept=True))
    assert accepted.new_match and apply(offered, accepted).table.rematch_offer is None
    with pytest.raises(ConflictError) as playing:
        decide(loaded, HOST, Rematch())
    assert playing.value.code == "match_not_finished"


def test_bot_seat_and_removal() -> None:
    alone = table(host_seat())
    seated = decide(alone, HOST, SeatBot("easy"))
    assert seated.seats == [SeatInfo(1, None, None, "easy", "classic")]
    assert seated.status == "ready"
    with_bot = apply(alone, seated)
    with pytest.raises(ConflictError) as same:
        decide(with_bot, HOST, SeatBot("easy"))
    assert same.value.code == "bot_unchanged"
    with pytest.raises(InvalidError) as level:
        decide(alone, HOST, SeatBot("grandmaster"))
    assert level.value.code == "invalid_bot_level"
    removed = decide(with_bot, HOST, RemoveBot())
    assert removed.vacated == [1] and removed.status == "waiting"
    # The bot's seat is the bot actor's only while it holds a bot.
    bot = Actor.bot(1, "easy")
    assert seat_of(with_bot, bot) == 1
    assert seat_of(apply(with_bot, removed), bot) is None


def test_chat_is_the_seats_and_leaves_the_version() -> None:
    loaded = table(host_seat(), guest_seat(), status="ready")
    change = decide(loaded, GUEST, Chat("  good luck  "))
    assert change.chat == (GUEST.player_id, "good luck")
    assert not change.bumps_version
    (event,) = change.events
    assert not event.visible_to(None) and event.visible_to(0)
    with pytest.raises(ForbiddenError):
        decide(loaded, STRANGER, Chat("hi"))
    with pytest.raises(InvalidError) as empty:
        decide(loaded, HOST, Chat("   "))
    assert empty.value.code == "invalid_chat"


def test_choose_deck() -> None:
    loaded = table(host_seat())
    assert decide(loaded, HOST, ChooseDeck("forest")).deck_designs == {0: "forest"}
    with pytest.raises(InvalidError) as bad:
        decide(loaded, HOST, ChooseDeck("plaid"))
    assert bad.value.code == "invalid_deck_design"


def test_claim_after_abandonment_is_decided_on_now() -> None:
    loaded = started()
    assert loaded.state is not None and loaded.moved_at == T0
    waiting = GUEST if loaded.state.hand.turn == 0 else HOST
    week = timedelta(days=14)
    with pytest.raises(ConflictError) as early:
        decide(loaded, waiting, Claim(), now=T0 + week - timedelta(seconds=1))
    assert early.value.code == "nothing_to_claim"
    change = decide(loaded, waiting, Claim(), now=T0 + week)
    assert change.status == "finished"
    assert change.state is not None and change.state.finish_reason is not None


def test_time_up_is_refused_before_the_deadline() -> None:
    clock = parse_control({"control": "per_move", "seconds": 30, "policy": "forfeit"})
    assert clock is not None
    loaded = started()
    assert loaded.state is not None
    seat = loaded.state.hand.turn
    running = dict(clock, seat=seat, since=T0.isoformat())
    clocked = Loaded(loaded.table, loaded.seats, loaded.state, running, loaded.moved_at)
    with pytest.raises(ConflictError) as early:
        decide(clocked, Actor("clock", "clock"), TimeUp(seat), now=T0 + timedelta(seconds=29))
    assert early.value.code == "not_due"
    change = decide(clocked, Actor("clock", "clock"), TimeUp(seat), now=T0 + timedelta(seconds=30))
    # No move made yet by that seat: the match is aborted, with no winner.
    assert change.status == "finished"
    assert change.state is not None and change.state.winner is None
    assert change.clock is not None and change.clock.deadline is None
