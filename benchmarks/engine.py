"""Engine speed on fixed seeds: best arrangement and random play. Prints a table, then JSON.

Random play: full hands of `standard`, each decision picks uniformly among the legal actions
(resign excluded), which are computed at every decision as a bot or a UI needs them.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.engine import Action, apply, legal_actions, make_ruleset, new_match
from app.engine.game import NEXT_HAND, OVER, RESIGN, MatchState
from benchmarks.melds_bench import measure_best_arrangement


def random_play(hands: int, seed: int = 7) -> dict[str, float]:
    """Play ``hands`` full hands with uniformly random legal actions; hands/s and actions/s."""
    rng = random.Random(seed)
    rules = make_ruleset("standard")
    played = actions = 0
    state: MatchState | None = None
    start = time.perf_counter()
    while played < hands:
        if state is None or state.status != "playing":
            state, _ = new_match(rules, f"bench-{seed}-{played}")
        if state.hand.phase == OVER:
            state, _ = apply(state, 0, Action(NEXT_HAND))
            continue
        seat = state.hand.turn
        moves = [a for a in legal_actions(state, seat) if a.kind != RESIGN]
        state, _ = apply(state, seat, rng.choice(moves))
        actions += 1
        if state.hand.phase == OVER:
            played += 1
    elapsed = time.perf_counter() - start
    return {
        "random_play_hands_per_s": round(played / elapsed, 1),
        "random_play_actions_per_s": round(actions / elapsed, 1),
        "random_play_actions_per_hand": round(actions / played, 1),
    }


def main() -> None:
    figures: dict[str, float] = {}
    figures.update(measure_best_arrangement())
    figures.update(random_play(2000))
    width = max(len(k) for k in figures)
    print(f"{'figure':<{width}}  value")
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
