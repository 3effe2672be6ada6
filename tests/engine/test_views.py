"""Seat views: the arranged hand and the legal part, worked out and checked against the engine."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine import PRESETS, apply, knock_discards, legal_actions, make_ruleset, new_match
from app.engine.cards import card
from app.engine.state import DISCARD, OVER, MatchState
from app.engine.views import seat_view
from tests.engine.builders import play, position
from tests.engine.test_game import DEFENDER_18, NO_OFFER
from tests.engine.test_properties import _random_move


def test_a_seat_that_took_the_upcard_sees_its_melds_and_knocks() -> None:
    state = position("7H 8H 9H KS KD KC 2C 3D AS 5C", "2H 3H 4H 5H 6S 7S 8S QD QC JD", "2S")
    state = play(state, (0, "take_upcard", None))
    view = seat_view(state, 0)
    assert view["hand"]["yours"] == {
        "cards": ["KC", "KD", "KS", "7H", "8H", "9H", "AS", "2C", "2S", "3D", "5C"],
        "melds": [["KC", "KD", "KS"], ["7H", "8H", "9H"]],
        "deadwood_cards": ["AS", "2C", "2S", "3D", "5C"],
        "deadwood": 13,
    }
    assert view["legal"] == {
        "actions": ["discard", "knock", "resign"],
        "discards": ["2C", "5C", "KC", "3D", "KD", "7H", "8H", "9H", "AS", "KS"],
        "cannot_discard": "2S",
        "knock_discards": [{"card": "5C", "deadwood": 8}, {"card": "3D", "deadwood": 10}],
        "can_knock": True,
        "gin_discards": [],
        "can_big_gin": False,
    }
    assert seat_view(state, 1)["legal"] == {
        "actions": ["resign"],
        "discards": [],
        "cannot_discard": None,
        "knock_discards": [],
        "can_knock": False,
        "gin_discards": [],
        "can_big_gin": False,
    }


def test_eleven_melded_cards_offer_big_gin_and_gin_discards() -> None:
    eleven = "AC 2C 3C 5D 5H 5S 9D 9H 9S 4C"
    state = position(eleven, DEFENDER_18, "QH", stock_top="5C", rules=NO_OFFER)
    view = seat_view(play(state, (0, "draw_stock", None)), 0)
    assert view["hand"]["yours"]["melds"] == [
        ["AC", "2C", "3C", "4C"],
        ["5C", "5D", "5H", "5S"],
        ["9D", "9H", "9S"],
    ]
    legal = view["legal"]
    assert legal["actions"] == ["big_gin", "discard", "knock", "resign"]
    assert legal["can_big_gin"] and legal["cannot_discard"] is None
    # A 4-card run and a 4-card set: either end of the run, or any 5, leaves gin.
    assert legal["gin_discards"] == ["AC", "4C", "5C", "5D", "5H", "5S"]
    assert {"card": "2C", "deadwood": 1} in legal["knock_discards"]


def code(card_id: int) -> str:
    return card(card_id).code


def _legal_part(state: MatchState, seat: int) -> dict[str, object]:
    """The legal part of a view, derived on its own from legal_actions and knock_discards."""
    actions = legal_actions(state, seat)
    hand = state.hand
    to_discard = hand.phase == DISCARD and hand.turn == seat and state.status == "playing"
    knocks = (
        knock_discards(hand.hands[seat], hand.knock_limit, hand.drawn_from_discard)
        if to_discard
        else []
    )
    return {
        "actions": sorted({a.kind for a in actions}),
        "discards": [code(a.card) for a in actions if a.kind == "discard" and a.card is not None],
        "cannot_discard": (
            code(hand.drawn_from_discard)
            if to_discard and hand.drawn_from_discard is not None
            else None
        ),
        "knock_discards": [{"card": code(c), "deadwood": dw} for c, dw in knocks],
        "can_knock": bool(knocks),
        "gin_discards": [code(c) for c, dw in knocks if dw == 0],
        "can_big_gin": any(a.kind == "big_gin" for a in actions),
    }


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(sorted(PRESETS)))
def test_the_legal_part_of_a_view_agrees_with_the_engine(seed: int, preset: str) -> None:
    rng = random.Random(seed)
    state, _ = new_match(make_ruleset(preset), f"v{seed}")
    for _ in range(150):
        for seat in (0, 1):
            assert seat_view(state, seat)["legal"] == _legal_part(state, seat)
        if state.status != "playing":
            break
        seat, move = _random_move(state, rng)
        if state.hand.phase != OVER:
            knocks = [a for a in legal_actions(state, seat) if a.kind == "knock"]
            move = knocks[0] if knocks and rng.random() < 0.5 else move
        state, _ = apply(state, seat, move)
