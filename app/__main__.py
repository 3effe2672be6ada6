"""`python -m app`: start the server (until the server lands, a demo game in the terminal)."""

from __future__ import annotations

import random

from app.engine import Action, apply, legal_actions, make_ruleset, new_match, view


def demo(seed: str = "demo") -> None:
    """Play one match of random legal moves and print each hand's outcome."""
    rng = random.Random(seed)
    state, _ = new_match(make_ruleset("standard"), seed)
    while state.status == "playing":
        seat = state.hand.turn if state.hand.phase != "over" else 0
        moves = [a for a in legal_actions(state, seat) if a.kind != "resign"]
        knocks = [a for a in moves if a.kind in ("knock", "big_gin")]
        move: Action = knocks[0] if knocks else rng.choice(moves)
        state, events = apply(state, seat, move)
        for event in events:
            if event.type == "hand_over":
                r = event.public
                print(
                    f"hand {r['hand_number']}: {r['outcome']:9} winner={r['winner']} "
                    f"points={r['points']} scores={r['scores']}"
                )
    final = view(state, None)["match"]
    print(f"match over: seat {final['winner']} wins, final scores {final['final_scores']}")


if __name__ == "__main__":
    demo()
