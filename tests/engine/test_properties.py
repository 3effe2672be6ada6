"""Invariants over random games: conservation, termination, redaction, refusals, round trips."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine import (
    PRESETS,
    Action,
    MatchState,
    RuleError,
    apply,
    legal_actions,
    make_ruleset,
    new_match,
    view,
)
from app.engine.cards import ALL_CARDS, FULL_DECK_MASK, card
from app.engine.game import _cards
from app.engine.state import ACTION_KINDS, NEXT_HAND, OVER, RESIGN

GAME = settings(max_examples=25, deadline=None)


def _conserved(state: MatchState) -> None:
    hand = state.hand
    masks = [hand.hands[0], hand.hands[1]]
    masks += [1 << c for c in hand.stock] + [1 << c for c in hand.discard_pile]
    total = 0
    for m in masks:
        assert not total & m, "a card is in two places"
        total |= m
    assert total == FULL_DECK_MASK
    assert len(hand.stock) + len(hand.discard_pile) + sum(h.bit_count() for h in hand.hands) == 52


def _random_move(state: MatchState, rng: random.Random) -> tuple[int, Action]:
    if state.hand.phase == OVER:
        return rng.randrange(2), Action(NEXT_HAND)
    seat = state.hand.turn
    moves = [a for a in legal_actions(state, seat) if a.kind != RESIGN]
    return seat, rng.choice(moves)


def _hidden_from(state: MatchState, seat: int | None) -> set[str]:
    """Card codes ``seat`` (None: a spectator) may not see now."""
    hand = state.hand
    hidden = set(hand.stock)
    for s in (0, 1):
        if s != seat:
            hidden |= set(_cards(hand.hands[s] & ~hand.taken_from_discard[s]))
    return {card(c).code for c in hidden}


def _codes_in(payload: Any) -> set[str]:
    text = json.dumps(payload)
    return {c.code for c in ALL_CARDS if f'"{c.code}"' in text}


@GAME
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(sorted(PRESETS)))
def test_cards_are_conserved_and_every_random_hand_ends(seed: int, preset: str) -> None:
    rng = random.Random(seed)
    state, _ = new_match(make_ruleset(preset), f"p{seed}")
    for _ in range(3):
        # Stock draws are bounded; discard-pile draws are not, so allow a generous count.
        for _ in range(2000):
            _conserved(state)
            seat, move = _random_move(state, rng)
            state, _ = apply(state, seat, move)
            if state.hand.phase == OVER:
                break
        assert state.hand.phase == OVER
        _conserved(state)
        if state.status != "playing":
            break
        state, _ = apply(state, 0, Action(NEXT_HAND))


@GAME
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(sorted(PRESETS)))
def test_random_play_that_knocks_when_it_can_finishes_the_match(seed: int, preset: str) -> None:
    rng = random.Random(seed)
    state, _ = new_match(make_ruleset(preset), f"m{seed}")
    for _ in range(20_000):
        if state.status != "playing":
            break
        seat, move = _random_move(state, rng)
        ends = [a for a in legal_actions(state, seat) if a.kind in ("knock", "big_gin")]
        state, _ = apply(state, seat, ends[0] if ends else move)
    assert state.status == "finished"
    assert state.winner is not None and state.scores[state.winner] >= state.rules.target


@GAME
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(sorted(PRESETS)))
def test_views_and_events_never_leak_hidden_cards_or_the_seed(seed: int, preset: str) -> None:
    rng = random.Random(seed)
    state, events = new_match(make_ruleset(preset), f"r{seed}")
    for _ in range(400):
        if state.status != "playing":
            break
        hand_over = state.hand.phase == OVER
        for recipient in (0, 1, None):
            if not hand_over:
                hidden = _hidden_from(state, recipient)
                payloads: list[Any] = [view(state, recipient)]
                payloads += [e.for_recipient(recipient) for e in events]
                for payload in payloads:
                    assert not _codes_in(payload) & hidden
                    assert state.hand.seed not in json.dumps(payload)
                    assert state.seed not in json.dumps(payload)
        seat, move = _random_move(state, rng)
        state, events = apply(state, seat, move)


def _any_action(rng: random.Random) -> Action:
    kind = rng.choice(ACTION_KINDS)
    return Action(kind, int(rng.choice(ALL_CARDS)) if rng.random() < 0.7 else None)


@GAME
@given(seed=st.integers(0, 10**6))
def test_every_refused_action_leaves_the_state_identical(seed: int) -> None:
    rng = random.Random(seed)
    state, _ = new_match(make_ruleset("standard"), f"i{seed}")
    refusals = 0
    for _ in range(300):
        if state.status != "playing":
            break
        before = json.dumps(state.to_dict(), sort_keys=True)
        seat, action = rng.randrange(2), _any_action(rng)
        legal = action in legal_actions(state, seat)
        try:
            apply(state, seat, action)
        except RuleError:
            refusals += 1
            assert not legal
        else:
            assert legal or action.kind == RESIGN or action.card is not None
        assert json.dumps(state.to_dict(), sort_keys=True) == before
        seat, move = _random_move(state, rng)
        state, _ = apply(state, seat, move)
    assert refusals > 0


def _legal_or_refused(state: MatchState, seat: int, action: Action) -> bool:
    try:
        apply(state, seat, action)
    except RuleError:
        return False
    return True


@GAME
@given(seed=st.integers(0, 10**6))
def test_legal_actions_are_exactly_the_accepted_ones(seed: int) -> None:
    rng = random.Random(seed)
    state, _ = new_match(make_ruleset(rng.choice(sorted(PRESETS))), f"l{seed}")
    for _ in range(60):
        if state.status != "playing":
            break
        for seat in (0, 1):
            legal = set(legal_actions(state, seat))
            kinds = [k for k in ACTION_KINDS if k not in ("discard", "knock")]
            candidates = [Action(k) for k in kinds]
            candidates += [Action(k, int(c)) for k in ("discard", "knock") for c in ALL_CARDS]
            for action in candidates:
                assert (action in legal) == _legal_or_refused(state, seat, action), action
        seat, move = _random_move(state, rng)
        state, _ = apply(state, seat, move)


@GAME
@given(seed=st.integers(0, 10**6))
def test_state_and_events_round_trip_through_json(seed: int) -> None:
    rng = random.Random(seed)
    state, events = new_match(make_ruleset("reino"), f"j{seed}")
    for _ in range(200):
        data = json.loads(json.dumps(state.to_dict()))
        assert MatchState.from_dict(data).to_dict() == state.to_dict()
        for e in events:
            again = type(e).from_dict(json.loads(json.dumps(e.to_dict())))
            assert again == e
        if state.status != "playing":
            break
        seat, move = _random_move(state, rng)
        state, events = apply(state, seat, move)
