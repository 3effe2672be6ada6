"""What a seat knows in public: built from its view and its redacted events, nothing else.

The view gives the seat's own hand, the discard pile, the stock size, the opponent's card
count and the cards the opponent took from the discard pile and still holds. The events of
the current hand add what the view forgets: every card the opponent picked up (even those it
later let go), every card it could have taken and refused, and what it discarded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.engine.cards import FULL_DECK_MASK, parse_card, to_mask


def mask_of(codes: Sequence[str]) -> int:
    """The mask of a list of card codes."""
    return to_mask(parse_card(c) for c in codes)


@dataclass(frozen=True, slots=True)
class Knowledge:
    """The public knowledge of one seat at one decision. Cards are ids; sets are masks."""

    seat: int
    phase: str
    actions: frozenset[str]
    hand: int
    discard_pile: tuple[int, ...]
    stock_size: int
    knock_limit: int
    dead_hand_at: int
    big_gin: bool
    undercut_bonus: int
    cannot_discard: int | None
    opp_count: int
    opp_known: int
    opp_taken: int
    opp_refused: int
    opp_discards: int
    my_discards: int
    opp_draws: int
    my_draws: int

    @property
    def top(self) -> int | None:
        """The top of the discard pile, if any."""
        return self.discard_pile[-1] if self.discard_pile else None

    @property
    def unseen(self) -> int:
        """Cards this seat has never seen: the stock plus the opponent's unknown cards."""
        return FULL_DECK_MASK & ~(self.hand | to_mask(self.discard_pile) | self.opp_known)

    @property
    def opp_unknown_count(self) -> int:
        return max(0, self.opp_count - self.opp_known.bit_count())


def _hand_events(events: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The events of the current hand: those from the last ``hand_started`` on."""
    for i in range(len(events) - 1, -1, -1):
        if events[i].get("type") == "hand_started":
            return events[i:]
    return events


def build(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> Knowledge:
    """The public knowledge of the seat ``view`` belongs to."""
    seat = int(view["you"])
    opp = 1 - seat
    hand = view["hand"]
    rules = view["match"]["rules"]
    legal = view["legal"]
    pile: list[int] = []
    opp_taken = opp_refused = opp_discards = my_discards = 0
    draws = [0, 0]
    for event in _hand_events(events):
        kind = event.get("type")
        who = int(event.get("seat", -1))
        if kind == "hand_started":
            pile = [int(parse_card(event["upcard"]))]
        elif kind in ("upcard_taken", "drew_discard"):
            c = pile.pop() if pile else int(parse_card(event["card"]))
            draws[who] += 1
            if who == opp:
                opp_taken |= 1 << c
        elif kind == "upcard_passed":
            if who == opp and pile:
                opp_refused |= 1 << pile[-1]
        elif kind == "drew_stock":
            draws[who] += 1
            if who == opp and pile:
                opp_refused |= 1 << pile[-1]
        elif kind in ("discarded", "knocked"):
            c = int(parse_card(event["card"]))
            pile.append(c)
            if who == opp:
                opp_discards |= 1 << c
            else:
                my_discards |= 1 << c
    seats = hand["seats"]
    cannot = legal.get("cannot_discard")
    return Knowledge(
        seat=seat,
        phase=hand["phase"],
        actions=frozenset(legal["actions"]),
        hand=mask_of(hand["yours"]["cards"]),
        discard_pile=tuple(int(parse_card(c)) for c in hand["discard_pile"]),
        stock_size=int(hand["stock_size"]),
        knock_limit=int(hand["knock_limit"]),
        dead_hand_at=int(rules["dead_hand_at"]),
        big_gin=bool(rules["big_gin_bonus"]),
        undercut_bonus=int(rules["undercut_bonus"]),
        cannot_discard=None if cannot is None else int(parse_card(cannot)),
        opp_count=int(seats[opp]["card_count"]),
        opp_known=mask_of(seats[opp]["known_cards"]),
        opp_taken=opp_taken,
        opp_refused=opp_refused & ~opp_taken,
        opp_discards=opp_discards,
        my_discards=my_discards,
        opp_draws=draws[opp],
        my_draws=draws[seat],
    )
