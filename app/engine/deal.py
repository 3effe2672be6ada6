"""Dealing: the first dealer and each hand's deck from the match seed, and a hand's terms.

Each hand's shuffle comes from the match seed by hashing (``_derive``), so a match replays
from its seed alone, and the hand's commitment can be checked once its seed is revealed.
"""

from __future__ import annotations

import hashlib

from app.engine.cards import (
    POINTS,
    code,
    commitment,
    mask_codes,
    shuffled_deck,
)
from app.engine.rules import Ruleset
from app.engine.state import (
    DRAW,
    SPADES,
    UPCARD_OFFER,
    Event,
    HandState,
    MatchState,
)


def _derive(seed: str, label: str) -> str:
    return hashlib.sha256(f"{seed}:{label}".encode()).hexdigest()


def new_match(rules: Ruleset, seed: str) -> tuple[MatchState, list[Event]]:
    """A match whose first hand is dealt; ``seed`` is the secret that fixes every deal."""
    if rules.first_dealer == "random":
        dealer = int(_derive(seed, "first-dealer"), 16) & 1
    else:
        dealer = 0 if rules.first_dealer == "seat0" else 1
    hand, event = deal_next(rules, seed, 1, dealer)
    state = MatchState(rules, seed, [0, 0], [0, 0], hand)
    return state, [event]


def deal_next(rules: Ruleset, match_seed: str, number: int, dealer: int) -> tuple[HandState, Event]:
    """Deal hand ``number`` from the seed and nonce the match's secret seed derives for it."""
    seed = _derive(match_seed, f"hand:{number}")
    nonce = _derive(match_seed, f"nonce:{number}")[:32]
    return deal_hand(rules, seed, nonce, number, dealer)


def deal_hand(
    rules: Ruleset, seed: str, nonce: str, number: int, dealer: int
) -> tuple[HandState, Event]:
    """Deal from a hand's own seed: ten each, one at a time from the non-dealer; the 21st is
    the upcard. A match record's verifier re-deals each hand with it."""
    deck = [int(c) for c in shuffled_deck(seed)]
    leader = 1 - dealer
    hands = [0, 0]
    for i in range(20):
        hands[leader if i % 2 == 0 else dealer] |= 1 << deck[i]
    upcard = deck[20]
    stock = deck[21:][::-1]  # deck[21] is drawn first
    knock_limit, multiplier = hand_terms(rules, upcard)
    hand = HandState(
        number=number,
        seed=seed,
        nonce=nonce,
        dealer=dealer,
        hands=hands,
        stock=stock,
        discard_pile=[upcard],
        phase=UPCARD_OFFER if rules.upcard_offer else DRAW,
        turn=leader,
        passes=0,
        drawn_from_discard=None,
        upcard_refused=False,
        taken_from_discard=[0, 0],
        first_upcard=upcard,
        knock_limit=knock_limit,
        multiplier=multiplier,
    )
    event = Event(
        "hand_started",
        {
            "hand_number": number,
            "dealer": dealer,
            "upcard": code(upcard),
            "stock_size": len(stock),
            "knock_limit": knock_limit,
            "multiplier": multiplier,
            "commitment": commitment(seed, nonce),
            "phase": hand.phase,
            "turn": leader,
        },
        {s: {"hand": mask_codes(hands[s])} for s in (0, 1)},
    )
    return hand, event


def hand_terms(rules: Ruleset, upcard: int) -> tuple[int, int]:
    """(knock limit, score multiplier) of a hand; Oklahoma takes both from the first upcard."""
    if not rules.oklahoma:
        return rules.knock_limit, 1
    # An ace upcard means only gin may end the hand; a spade doubles every score.
    return (0 if POINTS[upcard] == 1 else POINTS[upcard]), (2 if upcard >> 4 == SPADES else 1)
