"""How well a playout's discard rule predicts a level's real discards; prints figures and JSON.

    python benchmarks/playout_discards.py --level medium --against hard:0 --matches 40 --seed 1

Plays seeded arena matches (``benchmarks/bots.py``'s ``play_match`` setting: seats swapped on
each deal) and, at every discard (or knock) of ``--level`` whose hand has a deadwood card it
may throw, compares the card it threw with what two playout rules would have thrown: the
costliest loose card, highest id among equals (``costliest``, the rule before), and the
costliest with the fewest meld partners among equals (``fewest_partners``, a trial, see
docs/history/bots.md). Only the level's own cards are looked at; the figures say how often each
rule names its card.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots.evaluate import NEAR, bits, costliest
from app.bots.search import Budget
from app.engine import Action, apply, make_ruleset, new_match, parse_card
from app.engine.cards import POINTS
from app.engine.melds import arrange
from app.engine.state import OVER, PLAYING
from app.engine.views import seat_view
from benchmarks.bots import arena_bot


def fewest_partners(loose: int, hand: int) -> int:
    """The costliest card of ``loose``, among equally costly ones the one with the fewest
    cards of ``hand`` it could meld with (``NEAR``), the highest id among those."""
    top = POINTS[costliest(loose)]
    return min(
        (c for c in bits(loose) if POINTS[c] == top),
        key=lambda c: ((hand & NEAR[c]).bit_count(), -c),
    )


def tally(level: str, against: str, preset: str, seed: str, matches: int) -> dict[str, Any]:
    """Discards of ``level`` named by each rule over ``matches`` matches."""
    counts = {"discards": 0, "costliest": 0, "fewest_partners": 0, "tied": 0}
    for i in range(matches):
        a_seat = i % 2
        bots = {a_seat: arena_bot(level, Budget()), 1 - a_seat: arena_bot(against, Budget())}
        state, events = new_match(make_ruleset(preset), f"arena-{seed}-{i // 2}")
        seen: dict[int, list[dict[str, Any]]] = {
            s: [e.for_recipient(s) for e in events] for s in (0, 1)
        }
        while state.status == PLAYING:
            seat = a_seat if state.hand.phase == OVER else state.hand.turn
            view = seat_view(state, seat)
            move = bots[seat].choose(view, seen[seat])
            if seat == a_seat and move["kind"] in ("discard", "knock"):
                _judge(view, int(parse_card(move["card"])), counts)
            state, events = apply(state, seat, Action.from_dict(move))
            for event in events:
                for s in (0, 1):
                    if event.type == "hand_started":
                        seen[s] = []
                    seen[s].append(event.for_recipient(s))
    return counts


def _judge(view: dict[str, Any], thrown: int, counts: dict[str, int]) -> None:
    hand = 0
    for c in view["hand"]["yours"]["cards"]:
        hand |= 1 << int(parse_card(c))
    loose = arrange(hand).deadwood_mask
    cannot = view["legal"]["cannot_discard"]
    if cannot is not None:
        loose &= ~(1 << int(parse_card(cannot)))
    if not loose:
        return
    counts["discards"] += 1
    old, new = costliest(loose), fewest_partners(loose, hand)
    counts["costliest"] += thrown == old
    counts["fewest_partners"] += thrown == new
    counts["tied"] += old != new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="medium")
    parser.add_argument("--against", default="hard:0")
    parser.add_argument("--preset", default="standard")
    parser.add_argument("--seed", default="1")
    parser.add_argument("--matches", type=int, default=40)
    args = parser.parse_args()
    counts = tally(args.level, args.against, args.preset, args.seed, args.matches)
    n = max(1, counts["discards"])
    print(
        f"{args.level} vs {args.against}, {args.matches} matches: {counts['discards']} discards"
        f" with a loose card; the rules differ on {counts['tied'] / n:.1%} of them;"
        f" costliest names {counts['costliest'] / n:.1%},"
        f" fewest partners {counts['fewest_partners'] / n:.1%}"
    )
    print(json.dumps({**vars(args), **counts}))


if __name__ == "__main__":
    main()
