"""``decide``: a command on a loaded table, with the clock, rating and notes it brings."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from app.engine import Action
from app.errors import ConflictError
from app.table.clock import parse_control
from app.table.commands import Actor, Command, Join, Play, Start
from app.table.decide import decide
from app.table.model import Change, Loaded
from tests.table.test_commands import GUEST, HOST, SEED, T0, guest_seat, host_seat, started, table

ABANDON = timedelta(days=14)


def run(loaded: Loaded, actor: Actor, command: Command, expected: int | None = None) -> Change:
    return decide(loaded, actor, command, expected, ABANDON, now=T0, seed=SEED, warn_at=0.25)


def test_a_pinned_version_the_table_left_is_stale() -> None:
    loaded = table(host_seat(), version=3)
    with pytest.raises(ConflictError) as stale:
        run(loaded, GUEST, Join(), expected=2)
    assert stale.value.code == "stale_version"
    assert run(loaded, GUEST, Join(), expected=3).status == "ready"


def test_a_join_tells_the_creator() -> None:
    change = run(table(host_seat()), GUEST, Join())
    assert [(n.player_id, n.kind) for n in change.notes] == [(HOST.player_id, "opponent_joined")]
    assert change.notes[0].payload == {"player": {"id": GUEST.player_id, "name": GUEST.name}}
    assert not change.rated_result and change.clock is None


def test_a_move_tells_the_player_whose_turn_it_becomes() -> None:
    loaded = started()
    assert loaded.state is not None
    seat = loaded.state.hand.turn
    mover, other = (HOST, GUEST) if seat == 0 else (GUEST, HOST)
    assert loaded.state.hand.phase == "upcard_offer"
    # Passing the upcard offer hands it to the other seat.
    change = run(loaded, mover, Play(Action("pass")))
    assert change.state is not None and change.state.hand.turn == 1 - seat
    assert [(n.player_id, n.kind) for n in change.notes] == [(other.player_id, "your_turn")]
    assert change.notes[0].payload == {"hand_number": 1, "phase": change.state.hand.phase}


def test_a_rated_result_is_a_fact_of_the_change() -> None:
    loaded = started()
    rated = Loaded(replace(loaded.table, rated=True), loaded.seats, loaded.state)
    # A resignation before the resigning seat's first move still has a winner: rated.
    change = run(rated, GUEST, Play(Action("resign")))
    assert change.status == "finished" and change.rated_result
    kinds = sorted((n.player_id, n.kind) for n in change.notes)
    assert kinds == sorted(
        [(HOST.player_id, "match_finished"), (GUEST.player_id, "match_finished")]
    )
    # The same on a casual table moves no rating.
    assert not run(loaded, GUEST, Play(Action("resign"))).rated_result


def test_a_clocked_table_gets_its_clock_and_warning() -> None:
    clock = parse_control({"control": "per_move", "seconds": 60})
    ready = table(host_seat(), guest_seat(), status="ready")
    clocked = Loaded(ready.table, ready.seats, None, clock)
    change = run(clocked, HOST, Start())
    assert change.clock is not None and change.state is not None
    turn = change.state.hand.turn
    assert change.clock.state["seat"] == turn
    assert change.clock.deadline == T0 + timedelta(seconds=60)
    warning = [n for n in change.notes if n.kind == "time_running_out"]
    assert len(warning) == 1
    assert warning[0].not_before == T0 + timedelta(seconds=45)
