"""What this opponent does, read from the match's events: LUNA's model of the player opposite.

Every finished hand ends with a ``hand_over`` that shows both hands (each seat's last 10 cards,
after its last discard) and who knocked with what. From those the model counts, over the
match so far:

- *knocks*: a knock with deadwood above 0 is a knock taken; a hand the opponent did not end
  (this seat knocked, or it went dead) after the opponent had discarded, with the opponent's
  revealed deadwood within that hand's knock limit, is a knock declined (its hand then was the
  one it discarded to last). Gins tell nothing: every player takes them.
- *pickups*: a card the opponent took from the discard pile and still held in a meld at the
  end was taken to meld; one it let go again, or kept as deadwood, was taken for some other
  reason (a lower count).

Each is a Beta posterior mean, so a few hands do not overfit: ``Habits.knocks`` is the chance
the opponent knocks when it can (the rest of the time it waits for gin), ``Habits.melds_only``
the chance it takes discards only to meld them (and so, reading the refusals, that it takes
every card that melds).

The model is pure: a function of the seat and its events, read afresh at every decision.
LUNA uses it twice (``app.bots.knock.sample_opponent``, ``app.bots.search``): a sampled
opponent hand that contradicts the current hand's play is drawn again with the model's
probability (an eager knocker that has discarded and not knocked holds more than the knock
limit; a player that takes only to meld and refused a card holds no two cards that meld with
it), and in a playout the opponent waits for gin as often as the model says it does.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.bots.evaluate import meld_draws
from app.bots.knowledge import Knowledge, mask_of
from app.engine.cards import parse_card
from app.engine.melds import arrange, deadwood

# Beta priors (taken, declined) and (to meld, otherwise): most players knock when they can and
# take a discard only to meld it, and four hands' evidence weighs as much as the prior.
KNOCK_PRIOR = (4.0, 1.0)
MELD_PRIOR = (3.0, 1.0)
# A sampled hand that contradicts the model is drawn again at most this many times.
RETRIES = 4


@dataclass(frozen=True, slots=True)
class Habits:
    """The opponent's habits over the match so far, with the counts behind them."""

    taken: int = 0
    declined: int = 0
    to_meld: int = 0
    otherwise: int = 0
    hands: int = 0

    @property
    def knocks(self) -> float:
        """P(it knocks when it can with deadwood above 0)."""
        a, b = KNOCK_PRIOR
        return (a + self.taken) / (a + b + self.taken + self.declined)

    @property
    def waits(self) -> float:
        """P(it plays on for gin when it could knock)."""
        return 1.0 - self.knocks

    @property
    def melds_only(self) -> float:
        """P(it takes a discard only to meld it)."""
        a, b = MELD_PRIOR
        return (a + self.to_meld) / (a + b + self.to_meld + self.otherwise)

    def allows(self, k: Knowledge, hand: int, rng: random.Random) -> bool:
        """Whether the sampled opponent ``hand`` (its cards now) stands against this hand's
        play, each contradiction rejecting it with the model's probability."""
        if k.opp_discards:  # it has discarded since its last draw, and did not knock
            dw = deadwood(hand)
            if dw <= k.knock_limit and (dw == 0 or rng.random() < self.knocks):
                return False
        return not (k.opp_refused & meld_draws(hand) and rng.random() < self.melds_only)


def read(events: Sequence[Mapping[str, Any]], seat: int) -> Habits:
    """The habits of the player opposite ``seat`` from the events ``seat`` has seen: the
    hands of the match that are over (those of the current hand tell nothing yet)."""
    opp = 1 - seat
    taken = declined = to_meld = otherwise = hands = 0
    limit = 10
    picked: list[int] = []
    discarded = False
    for event in events:
        kind = event.get("type")
        if kind == "hand_started":
            limit = int(event.get("knock_limit", 10))
            picked, discarded = [], False
        elif kind in ("upcard_taken", "drew_discard") and event.get("seat") == opp:
            picked.append(int(parse_card(event["card"])))
        elif kind == "discarded" and event.get("seat") == opp:
            discarded = True
        elif kind == "hand_over":
            revealed = event.get("hands")
            if not revealed:
                continue
            hands += 1
            held = mask_of(revealed[opp])
            if event.get("knocker") == opp:
                taken += event.get("outcome") not in ("gin", "big_gin")  # a gin tells nothing
            elif discarded and held.bit_count() == 10 and deadwood(held) <= limit:
                declined += 1
            melded = arrange(held).melded_mask
            for c in picked:
                if melded >> c & 1:
                    to_meld += 1
                else:
                    otherwise += 1
    return Habits(taken, declined, to_meld, otherwise, hands)
