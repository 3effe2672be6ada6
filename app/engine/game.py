"""The match as a state machine: ``legal_actions`` and ``apply`` (``new_match`` deals the first
hand: ``app.engine.deal``).

``apply(state, seat, action)`` validates first and only then builds a new state, so a refused
action (a RuleError) leaves the given state exactly as it was. Events carry a public part and,
where a seat may see more, a private part per seat; ``views`` redacts them per recipient.
"""

from __future__ import annotations

from typing import Any

from app.engine.cards import (
    code,
    mask_codes,
)
from app.engine.deal import deal_next
from app.engine.errors import RuleError
from app.engine.melds import deadwood, discards_within
from app.engine.settlement import Settlement, settle
from app.engine.state import (
    ACTION_KINDS,
    BIG_GIN,
    DISCARD,
    DISCARD_CARD,
    DRAW,
    DRAW_DISCARD,
    DRAW_STOCK,
    FINISHED,
    KNOCK,
    NEXT_HAND,
    OVER,
    PASS,
    PLAYING,
    RESIGN,
    TAKE_UPCARD,
    UPCARD_OFFER,
    Action,
    Event,
    HandState,
    MatchState,
)


def _cards(mask: int) -> list[int]:
    out: list[int] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def knock_discards(hand: int, limit: int, forbidden: int | None) -> list[tuple[int, int]]:
    """(card, deadwood after discarding it) for each discard of an 11-card hand allowing a knock."""
    return discards_within(hand, limit, forbidden)


# Actions are immutable: legal_actions hands out these shared instances instead of new ones.
_NEXT_HAND = Action(NEXT_HAND)
_TAKE_UPCARD = Action(TAKE_UPCARD)
_PASS = Action(PASS)
_DRAW_STOCK = Action(DRAW_STOCK)
_DRAW_DISCARD = Action(DRAW_DISCARD)
_BIG_GIN = Action(BIG_GIN)
_RESIGN = Action(RESIGN)
_DISCARD_OF = tuple(Action(DISCARD_CARD, c) for c in range(64))
_KNOCK_OF = tuple(Action(KNOCK, c) for c in range(64))
# The discards of the cards in each byte of a hand mask, per byte position (as ``mask_codes``):
# a hand's discards in eight lookups instead of a step per card.
_DISCARDS_IN_BYTE: tuple[tuple[tuple[Action, ...], ...], ...] = tuple(
    tuple(tuple(_DISCARD_OF[8 * i + k] for k in range(8) if byte >> k & 1) for byte in range(256))
    for i in range(8)
)


def _discards(mask: int) -> list[Action]:
    """The discard actions of a hand mask's cards, in card id order."""
    b0, b1, b2, b3, b4, b5, b6, b7 = _DISCARDS_IN_BYTE
    return [
        *b0[mask & 255],
        *b1[mask >> 8 & 255],
        *b2[mask >> 16 & 255],
        *b3[mask >> 24 & 255],
        *b4[mask >> 32 & 255],
        *b5[mask >> 40 & 255],
        *b6[mask >> 48 & 255],
        *b7[mask >> 56 & 255],
    ]


def legal_actions(state: MatchState, seat: int) -> list[Action]:
    """Every action ``seat`` may take now (resign is always open while the match is on)."""
    return legal_actions_with_knocks(state, seat)[0]


def legal_actions_with_knocks(
    state: MatchState, seat: int
) -> tuple[list[Action], list[tuple[int, int]]]:
    """``legal_actions`` and, when ``seat`` is to discard, its ``knock_discards`` (else empty)."""
    if state.status != PLAYING:
        return [], []
    hand = state.hand
    out: list[Action] = []
    knocks: list[tuple[int, int]] = []
    if hand.phase == OVER:
        out.append(_NEXT_HAND)
    elif hand.turn == seat:
        if hand.phase == UPCARD_OFFER:
            out += [_TAKE_UPCARD, _PASS]
        elif hand.phase == DRAW:
            out.append(_DRAW_STOCK)
            if not hand.upcard_refused:
                out.append(_DRAW_DISCARD)
        else:
            cards = hand.hands[seat]
            forbidden = hand.drawn_from_discard
            knocks = knock_discards(cards, hand.knock_limit, forbidden)
            out += _discards(cards if forbidden is None else cards & ~(1 << forbidden))
            out += [_KNOCK_OF[c] for c, _ in knocks]
            if state.rules.big_gin_bonus and deadwood(cards) == 0:
                out.append(_BIG_GIN)
    out.append(_RESIGN)
    return out, knocks


def apply(state: MatchState, seat: int, action: Action) -> tuple[MatchState, list[Event]]:
    """Validate ``action`` by ``seat`` and return the new state and its events."""
    if seat not in (0, 1):
        raise RuleError("not_a_seat", f"seat must be 0 or 1, not {seat!r}")
    if action.kind not in ACTION_KINDS:
        raise RuleError("unknown_action", f"unknown action {action.kind!r}")
    if state.status != PLAYING:
        raise RuleError("match_over", "the match is over")
    new, events = _apply(state, seat, action)
    if not new.moved[seat]:
        new.moved = [new.moved[s] or s == seat for s in (0, 1)]
    return new, events


def _apply(state: MatchState, seat: int, action: Action) -> tuple[MatchState, list[Event]]:
    if action.kind == RESIGN:
        return _resign(state, seat)
    hand = state.hand
    if action.kind == NEXT_HAND:
        if hand.phase != OVER:
            raise RuleError("wrong_phase", "the hand is still being played")
        return _next_hand(state)
    if hand.phase == OVER:
        raise RuleError("wrong_phase", "the hand is over; start the next hand")
    if hand.turn != seat:
        raise RuleError("not_your_turn", "it is the other player's turn")
    expected = _PHASE_OF[action.kind]
    if hand.phase != expected:
        raise RuleError("wrong_phase", f"{action.kind} is not allowed in phase {hand.phase}")
    return _HANDLERS[action.kind](state, seat, action)


def _opponent(seat: int) -> int:
    return 1 - seat


def _take_upcard(state: MatchState, seat: int, action: Action) -> tuple[MatchState, list[Event]]:
    return _take_from_pile(state, seat, "upcard_taken")


def _take_from_pile(
    state: MatchState, seat: int, event_type: str
) -> tuple[MatchState, list[Event]]:
    """Take the top of the discard pile: public, and that card may not be discarded this turn."""
    new = state.copy()
    hand = new.hand
    c = hand.discard_pile.pop()
    hand.hands[seat] |= 1 << c
    hand.taken_from_discard[seat] |= 1 << c
    hand.drawn_from_discard = c
    hand.phase = DISCARD
    return new, [Event(event_type, {"seat": seat, "card": code(c)})]


def _pass(state: MatchState, seat: int, action: Action) -> tuple[MatchState, list[Event]]:
    new = state.copy()
    hand = new.hand
    hand.passes += 1
    if hand.passes == 1:
        hand.turn = _opponent(seat)
    else:
        # Both passed: the non-dealer draws from the stock; the refused upcard stays put.
        hand.turn = _opponent(hand.dealer)
        hand.phase = DRAW
        hand.upcard_refused = True
    return new, [Event("upcard_passed", {"seat": seat, "next": hand.turn})]


def _draw_stock(state: MatchState, seat: int, action: Action) -> tuple[MatchState, list[Event]]:
    new = state.copy()
    hand = new.hand
    c = hand.stock.pop()
    hand.hands[seat] |= 1 << c
    hand.drawn_from_discard = None
    hand.upcard_refused = False
    hand.phase = DISCARD
    event = Event(
        "drew_stock", {"seat": seat, "stock_size": len(hand.stock)}, {seat: {"card": code(c)}}
    )
    return new, [event]


def _draw_discard(state: MatchState, seat: int, action: Action) -> tuple[MatchState, list[Event]]:
    if state.hand.upcard_refused:
        raise RuleError("upcard_refused", "both passed the upcard: draw from the stock")
    return _take_from_pile(state, seat, "drew_discard")


def _check_discard(hand: HandState, seat: int, c: int) -> None:
    if not hand.hands[seat] >> c & 1:
        raise RuleError("card_not_in_hand", f"{code(c)} is not in your hand")
    if c == hand.drawn_from_discard:
        raise RuleError(
            "cannot_discard_drawn_card", f"{code(c)} was just taken from the discard pile"
        )


def _remove(hand: HandState, seat: int, c: int) -> None:
    hand.hands[seat] &= ~(1 << c)
    hand.taken_from_discard[seat] &= ~(1 << c)
    hand.discard_pile.append(c)
    hand.drawn_from_discard = None


def _discard(state: MatchState, seat: int, action: Action) -> tuple[MatchState, list[Event]]:
    c = _card_of(action)
    _check_discard(state.hand, seat, c)
    new = state.copy()
    hand = new.hand
    _remove(hand, seat, c)
    events = [Event("discarded", {"seat": seat, "card": code(c)})]
    if len(hand.stock) <= new.rules.dead_hand_at:
        events += _end_hand(new, None, dead=True)
    else:
        hand.turn = _opponent(seat)
        hand.phase = DRAW
    return new, events


def _knock(state: MatchState, seat: int, action: Action) -> tuple[MatchState, list[Event]]:
    c = _card_of(action)
    hand = state.hand
    _check_discard(hand, seat, c)
    dw = deadwood(hand.hands[seat] & ~(1 << c))
    if dw > hand.knock_limit:
        raise RuleError(
            "deadwood_too_high",
            f"deadwood after discarding {code(c)} is {dw}; the knock limit is {hand.knock_limit}",
        )
    new = state.copy()
    _remove(new.hand, seat, c)
    events = [Event("knocked", {"seat": seat, "card": code(c), "deadwood": dw, "gin": dw == 0})]
    return new, events + _end_hand(new, seat, dead=False)


def _big_gin(state: MatchState, seat: int, action: Action) -> tuple[MatchState, list[Event]]:
    if not state.rules.big_gin_bonus:
        raise RuleError("big_gin_not_allowed", "this ruleset has no big gin")
    if deadwood(state.hand.hands[seat]) != 0:
        raise RuleError("not_big_gin", "big gin needs all 11 cards in melds")
    new = state.copy()
    new.hand.drawn_from_discard = None
    return new, [Event("big_gin", {"seat": seat}), *_end_hand(new, seat, dead=False, big=True)]


def _card_of(action: Action) -> int:
    if action.card is None:
        raise RuleError("card_required", f"{action.kind} needs a card")
    return action.card


def _end_hand(
    state: MatchState, knocker: int | None, *, dead: bool, big: bool = False
) -> list[Event]:
    """Close the hand in place: settle, score, pick the next dealer, maybe end the match."""
    hand = state.hand
    rules = state.rules
    hand.phase = OVER
    revealed = [mask_codes(m) for m in hand.hands]
    result: dict[str, Any] = {
        "hand_number": hand.number,
        "hands": revealed,
        "seed": hand.seed,
        "nonce": hand.nonce,
    }
    if dead or knocker is None:
        result.update(outcome="dead_hand", knocker=None, winner=None, points=0)
        state.next_dealer = hand.dealer
    else:
        s: Settlement = settle(
            hand.hands[knocker],
            hand.hands[_opponent(knocker)],
            big_gin=big,
            gin_bonus=rules.gin_bonus,
            big_gin_bonus=rules.big_gin_bonus,
            undercut_bonus=rules.undercut_bonus,
            multiplier=hand.multiplier,
            layoff=rules.layoff,
        )
        winner = knocker if s.knocker_won else _opponent(knocker)
        result.update(
            outcome=s.outcome,
            knocker=knocker,
            winner=winner,
            points=s.points,
            settlement=s.to_dict(),
        )
        state.scores[winner] += s.points
        state.hands_won[winner] += 1
        state.next_dealer = winner if rules.winner_deals else _opponent(hand.dealer)
    result["scores"] = list(state.scores)
    hand.result = result
    state.history.append({k: result[k] for k in ("hand_number", "outcome", "winner", "points")})
    events = [Event("hand_over", result)]
    if result["winner"] is not None and state.scores[result["winner"]] >= rules.target:
        events += _finish(state, result["winner"], "target")
    return events


def _finish(state: MatchState, winner: int, reason: str) -> list[Event]:
    """End the match; game/shutout and line bonuses apply only when the target was reached."""
    rules = state.rules
    loser = _opponent(winner)
    bonuses = [{"game": 0, "line": 0}, {"game": 0, "line": 0}]
    if reason == "target":
        shutout = state.scores[loser] == 0
        bonuses[winner]["game"] = rules.shutout_bonus if shutout else rules.game_bonus
        for s in (0, 1):
            bonuses[s]["line"] = rules.line_bonus * state.hands_won[s]
    state.status = FINISHED
    state.winner = winner
    state.finish_reason = reason
    state.bonuses = bonuses
    state.final_scores = [state.scores[s] + bonuses[s]["game"] + bonuses[s]["line"] for s in (0, 1)]
    return [
        Event(
            "match_over",
            {
                "winner": winner,
                "reason": reason,
                "scores": list(state.scores),
                "bonuses": bonuses,
                "final_scores": list(state.final_scores),
            },
        )
    ]


def _resign(state: MatchState, seat: int) -> tuple[MatchState, list[Event]]:
    new = state.copy()
    events = [Event("resigned", {"seat": seat})]
    return new, events + _finish(new, _opponent(seat), "resignation")


# How a match ends without being played out, besides a resignation: the seat's time ran out
# (a ``forfeit`` table, or a claim once it did), or the seat made no move for so long that the
# waiting player claimed the match. The server's clock decides when; the engine only applies it.
FORFEIT_REASONS = ("timeout", "abandoned")
# A forfeit as a record's action: what a verifier replays for a ``timed_out`` event.
FORFEIT = "forfeit"


def forfeit(state: MatchState, seat: int, reason: str) -> tuple[MatchState, list[Event]]:
    """``seat`` loses the match for ``reason`` (one of FORFEIT_REASONS), as by resigning."""
    if seat not in (0, 1):
        raise RuleError("not_a_seat", f"seat must be 0 or 1, not {seat!r}")
    if reason not in FORFEIT_REASONS:
        raise RuleError("unknown_reason", f"no forfeit for {reason!r}")
    if state.status != PLAYING:
        raise RuleError("match_over", "the match is over")
    new = state.copy()
    events = [Event("timed_out", {"seat": seat, "reason": reason})]
    return new, events + _finish(new, _opponent(seat), reason)


# How a match ends with no result: a seat's time ran out (or it stayed silent) before it made
# any move of the match. The table's clock decides when (``app.table.clock``).
ABORTED = "aborted"


def abort(state: MatchState, seat: int, reason: str) -> tuple[MatchState, list[Event]]:
    """The match ends with no winner: ``seat`` made no move of it before ``reason`` (one of
    FORFEIT_REASONS). Scores stay as they are; no bonus is added."""
    if seat not in (0, 1):
        raise RuleError("not_a_seat", f"seat must be 0 or 1, not {seat!r}")
    if reason not in FORFEIT_REASONS:
        raise RuleError("unknown_reason", f"no abort for {reason!r}")
    if state.status != PLAYING:
        raise RuleError("match_over", "the match is over")
    if state.moved[seat]:
        raise RuleError("seat_has_moved", "that seat has moved: the match has a result")
    new = state.copy()
    new.status = FINISHED
    new.finish_reason = ABORTED
    new.bonuses = [{"game": 0, "line": 0}, {"game": 0, "line": 0}]
    new.final_scores = list(new.scores)
    return new, [
        Event("match_aborted", {"seat": seat, "reason": reason}),
        Event(
            "match_over",
            {
                "winner": None,
                "reason": ABORTED,
                "scores": list(new.scores),
                "bonuses": new.bonuses,
                "final_scores": list(new.final_scores),
            },
        ),
    ]


def _next_hand(state: MatchState) -> tuple[MatchState, list[Event]]:
    new = state.copy()
    dealer = new.next_dealer if new.next_dealer is not None else new.hand.dealer
    new.hand, event = deal_next(new.rules, new.seed, new.hand.number + 1, dealer)
    new.next_dealer = None
    return new, [event]


_PHASE_OF = {
    TAKE_UPCARD: UPCARD_OFFER,
    PASS: UPCARD_OFFER,
    DRAW_STOCK: DRAW,
    DRAW_DISCARD: DRAW,
    DISCARD_CARD: DISCARD,
    KNOCK: DISCARD,
    BIG_GIN: DISCARD,
}
_HANDLERS = {
    TAKE_UPCARD: _take_upcard,
    PASS: _pass,
    DRAW_STOCK: _draw_stock,
    DRAW_DISCARD: _draw_discard,
    DISCARD_CARD: _discard,
    KNOCK: _knock,
    BIG_GIN: _big_gin,
}
