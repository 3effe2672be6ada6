"""What each recipient may see (RULES.md §10): a seat's view, a spectator's view, events.

A seat sees its own hand (in best-arrangement order, melds marked), the discard pile, the
stock's size, the opponent's card count and the cards the opponent took from the discard pile
and still holds, and what it may do now. A spectator sees only the public part. The stock's
order, the opponent's other cards and the deal seed appear nowhere until the hand is over.
"""

from __future__ import annotations

from typing import Any

from app.engine.cards import code, codes, mask_codes
from app.engine.game import _cards, legal_actions_with_knocks
from app.engine.melds import arrange
from app.engine.state import BIG_GIN, DISCARD, DISCARD_CARD, FINISHED, OVER, MatchState

# Deadwood is shown by rank, then suit: the sort key of each card id.
_RANK_FIRST: tuple[int, ...] = tuple((c & 15) * 4 + (c >> 4) for c in range(64))


def arranged_hand(mask: int) -> dict[str, Any]:
    """A hand in best-arrangement order: melds first (each marked), then deadwood by rank."""
    arrangement = arrange(mask)
    melds = [mask_codes(m) for m in arrangement.meld_masks]
    loose = codes(sorted(_cards(arrangement.deadwood_mask), key=_RANK_FIRST.__getitem__))
    return {
        "cards": [c for meld in melds for c in meld] + loose,
        "melds": melds,
        "deadwood_cards": loose,
        "deadwood": arrangement.deadwood,
    }


def _legal(state: MatchState, seat: int) -> dict[str, Any]:
    actions, knocks = legal_actions_with_knocks(state, seat)
    hand = state.hand
    my_turn_to_discard = hand.phase == DISCARD and hand.turn == seat and state.status != FINISHED
    kinds = {a.kind for a in actions}
    return {
        "actions": sorted(kinds),
        "discards": codes(a.card for a in actions if a.kind == DISCARD_CARD and a.card is not None),
        "cannot_discard": (
            code(hand.drawn_from_discard)
            if my_turn_to_discard and hand.drawn_from_discard is not None
            else None
        ),
        "knock_discards": [{"card": code(c), "deadwood": dw} for c, dw in knocks],
        "can_knock": bool(knocks),
        "gin_discards": [code(c) for c, dw in knocks if dw == 0],
        "can_big_gin": BIG_GIN in kinds,
    }


def _public(state: MatchState) -> dict[str, Any]:
    hand = state.hand
    over = hand.phase == OVER
    seats = []
    for s in (0, 1):
        seats.append(
            {
                "seat": s,
                "card_count": hand.hands[s].bit_count(),
                "known_cards": mask_codes(hand.taken_from_discard[s] & hand.hands[s]),
                "score": state.scores[s],
                "hands_won": state.hands_won[s],
            }
        )
    return {
        "match": {
            "status": state.status,
            "rules": state.rules.to_dict(),
            "scores": list(state.scores),
            "hands_won": list(state.hands_won),
            "winner": state.winner,
            "finish_reason": state.finish_reason,
            "bonuses": state.bonuses,
            "final_scores": state.final_scores,
            "history": list(state.history),
        },
        "hand": {
            "number": hand.number,
            "dealer": hand.dealer,
            "phase": hand.phase,
            "turn": None if over else hand.turn,
            "stock_size": len(hand.stock),
            "discard_pile": codes(hand.discard_pile),
            "upcard_refused": hand.upcard_refused,
            "knock_limit": hand.knock_limit,
            "multiplier": hand.multiplier,
            "seats": seats,
            "next_dealer": state.next_dealer,
            "result": hand.result,
        },
    }


def seat_view(state: MatchState, seat: int) -> dict[str, Any]:
    """Everything ``seat`` may see and do now."""
    view = _public(state)
    view["you"] = seat
    view["hand"]["yours"] = arranged_hand(state.hand.hands[seat])
    view["legal"] = _legal(state, seat)
    return view


def spectator_view(state: MatchState) -> dict[str, Any]:
    """Public information only."""
    view = _public(state)
    view["you"] = None
    return view


def view(state: MatchState, seat: int | None) -> dict[str, Any]:
    """The view for a seat (0 or 1) or, with None, for a spectator."""
    return spectator_view(state) if seat is None else seat_view(state, seat)
