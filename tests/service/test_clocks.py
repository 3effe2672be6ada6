"""The clock's arithmetic, pure: times are passed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.errors import InvalidError
from app.table.clock import Minimums, clock_view, deadline, parse_control, remaining, tick

T0 = datetime(2026, 1, 1, tzinfo=UTC)


# The arithmetic with short controls, as a server with low minimums takes them.
SHORT = Minimums(per_move=1, bank=1)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_none_is_no_clock() -> None:
    assert parse_control(None) is None
    assert parse_control({"control": "none"}) is None
    assert clock_view(None, T0)["control"] == "none"


@pytest.mark.parametrize(
    "raw",
    [
        {"control": "per_move"},
        {"control": "per_move", "seconds": 0},
        {"control": "per_move", "seconds": 10, "bonus": 5},
        {"control": "bank", "seconds": 10, "cap": 5},
        {"control": "bank", "seconds": "10"},
        {"control": "per_move", "seconds": 10, "policy": "shrug"},
        {"control": "per_move", "seconds": 10, "autoplay_level": "hard"},
        {"control": "per_move", "seconds": 10, "policy": "autoplay", "autoplay_level": "god"},
        {"control": "none", "seconds": 10},
        {"control": "hourglass", "seconds": 10},
    ],
)
def test_bad_controls_are_refused(raw: dict[str, object]) -> None:
    with pytest.raises(InvalidError) as refused:
        parse_control(raw, SHORT)
    assert refused.value.code == "invalid_time_control"


@pytest.mark.parametrize(
    "raw",
    [
        {"control": "per_move", "seconds": 14.9},
        {"control": "per_move", "seconds": 0.001, "policy": "forfeit"},
        {"control": "bank", "seconds": 59},
        {"control": "bank", "seconds": 600, "bonus": 700},
    ],
)
def test_absurd_controls_are_refused_by_default(raw: dict[str, object]) -> None:
    with pytest.raises(InvalidError) as refused:
        parse_control(raw)
    assert refused.value.code == "invalid_time_control"
    assert parse_control({"control": "per_move", "seconds": 15}) is not None
    assert parse_control({"control": "bank", "seconds": 60, "bonus": 60}) is not None


def test_per_move_deadline_runs_only_on_the_seats_turn() -> None:
    clock = parse_control({"control": "per_move", "seconds": 60, "policy": "forfeit"}, SHORT)
    assert clock is not None
    assert deadline(clock) is None
    clock = tick(clock, 1, at(0))
    assert deadline(clock) == at(60)
    assert remaining(clock, at(20)) == [60.0, 40.0]
    clock = tick(clock, 0, at(50))  # seat 1 played with 10 s to spare: a fresh minute for 0
    assert deadline(clock) == at(110)
    assert remaining(clock, at(50)) == [60.0, 60.0]
    clock = tick(clock, None, at(70))  # the hand is over: no clock runs
    assert deadline(clock) is None and clock["seat"] is None


def test_bank_gains_its_bonus_up_to_its_cap() -> None:
    clock = parse_control({"control": "bank", "seconds": 100, "bonus": 30, "cap": 120}, SHORT)
    assert clock is not None
    clock = tick(clock, 0, at(0))
    assert deadline(clock) == at(100)
    clock = tick(clock, 1, at(10))  # 90 left + 30 bonus, capped at 120
    assert clock["banks"] == [120.0, 100.0]
    clock = tick(clock, 0, at(90))  # seat 1 used 80: 20 + 30
    assert clock["banks"] == [120.0, 50.0]
    assert deadline(clock) == at(210)
    clock = tick(clock, 1, at(100), new_match=True)  # a new match starts every bank afresh
    assert clock["banks"] == [100.0, 100.0] and deadline(clock) == at(200)


def test_an_overdrawn_bank_keeps_only_its_bonus() -> None:
    clock = parse_control({"control": "bank", "seconds": 10, "bonus": 5}, SHORT)
    assert clock is not None and clock["cap"] == 10
    clock = tick(tick(clock, 0, at(0)), 1, at(25))
    assert clock["banks"] == [5.0, 10.0]


def test_a_claim_timeout_stops_the_deadline_until_the_seat_moves() -> None:
    clock = parse_control({"control": "per_move", "seconds": 5}, SHORT)
    assert clock is not None
    clock = dict(tick(clock, 1, at(0)), expired=1)
    assert deadline(clock) is None and remaining(clock, at(7)) == [5.0, 0.0]
    moved = tick(dict(clock, expired=None), 0, at(8))
    assert moved["expired"] is None and deadline(moved) == at(13)


def test_an_autoplayed_seat_is_due_after_the_grace() -> None:
    clock = parse_control({"control": "per_move", "seconds": 3, "policy": "autoplay"}, SHORT)
    assert clock is not None and clock["autoplay_level"] == "medium"
    clock = dict(tick(clock, 1, at(0)), expired=1)
    assert deadline(clock) == at(3)
    clock = tick(clock, 0, at(1))  # the bot played: the seat stays autoplayed
    assert clock["expired"] == 1 and deadline(clock) == at(4)
    assert clock_view(clock, at(2))["autoplay"] == 1
