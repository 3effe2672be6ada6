"""Engine speed beside OpenSpiel's C++ Gin Rummy, same hands, one run. Prints tables, then JSON.

    .venv/bin/python benchmarks/engine.py [--hands 5000] [--play 2000] [--openspiel-play 300]
                                          [--before REV]

* ``best_arrangement``: median µs per call over batches of 100 distinct hands (random and
  meld-dense, 10 and 11 cards, fixed seeds: ``benchmarks/melds_bench.py``), our search cache
  cleared at the start of each pass. OpenSpiel's ``GinRummyUtils.min_deadwood`` is timed on
  the very same hands through its Python binding (``pyspiel``), which has no cache. On 11 cards
  it also picks the best discard, as our ``best_arrangement`` does not: the issue's comparison.
* Random legal play: full hands of `standard`, each decision picks uniformly among the legal
  actions (resign excluded), which are computed at every decision as a bot or a UI needs them;
  OpenSpiel's ``gin_rummy`` game played the same way (chance outcomes drawn by their
  probabilities), one OpenSpiel game being one hand. The two take turns in ten rounds.
* ``--before REV`` adds a column: ``best_arrangement`` as ``app/engine/melds.py`` was at that
  git revision (loaded beside ours; ``cards.py`` is shared), timed in turn on the same hands.

OpenSpiel is never a dependency of the server. To compare, install it beside the benchmark only,
e.g. ``python3 -m venv /tmp/osp && /tmp/osp/bin/pip install open-spiel`` and run this script
with ``/tmp/osp/bin/python`` (the engine is the standard library only), or
``.venv/bin/pip install open-spiel``. Without it the OpenSpiel columns say why they are empty.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.engine import (
    Action,
    apply,
    best_arrangement,
    legal_actions,
    make_ruleset,
    new_match,
    view,
)
from app.engine.cards import mask_codes
from app.engine.melds import _search, deadwood
from app.engine.state import NEXT_HAND, OVER, RESIGN
from benchmarks.melds_bench import BATCH, HANDS, bench_hands, side_by_side_us

# Our suits C D H S (card id suit * 16 + rank) as OpenSpiel's s c d h (card suit * 13 + rank).
_OPENSPIEL_SUIT = (1, 2, 3, 0)


Player = Callable[[int], tuple[int, float, float]]  # n hands -> (actions, wall s, CPU s)


def our_player(seed: int = 7) -> Player:
    """Our engine's random play, resumable: each call plays ``n`` more full hands."""
    rng = random.Random(seed)
    rules = make_ruleset("standard")
    match = 0
    state, _ = new_match(rules, f"bench-{seed}-{match}")

    def play(hands: int) -> tuple[int, float, float]:
        nonlocal state, match
        played = actions = 0
        start, cpu = time.perf_counter(), time.process_time()
        while played < hands:
            if state.status != "playing":
                match += 1
                state, _ = new_match(rules, f"bench-{seed}-{match}")
            if state.hand.phase == OVER:
                state, _ = apply(state, 0, Action(NEXT_HAND))
                continue
            seat = state.hand.turn
            moves = [a for a in legal_actions(state, seat) if a.kind != RESIGN]
            state, _ = apply(state, seat, rng.choice(moves))
            actions += 1
            if state.hand.phase == OVER:
                played += 1
        return actions, time.perf_counter() - start, time.process_time() - cpu

    return play


def engine_per_move(hands: int, seed: int = 11) -> dict[str, float]:
    """CPU µs per move of the engine's parts of a server move, over random play of ``hands``:
    the legal actions, ``apply``, and a view for each seat (which arranges its hand and lists
    its legal actions again). Each part is timed on its own (``process_time_ns`` around it,
    less what one reading of that clock costs: about 0.7 µs here, a system call)."""
    rng = random.Random(seed)
    rules = make_ruleset("standard")
    state, _ = new_match(rules, f"per-move-{seed}")
    clock = time.process_time_ns
    t0 = clock()
    for _ in range(1000):
        clock()
    reading = (clock() - t0) / 1001
    legal_ns = apply_ns = view_ns = 0
    played = moves = 0
    while played < hands:
        if state.status != "playing":
            state, _ = new_match(rules, f"per-move-{seed}-{played}")
        if state.hand.phase == OVER:
            state, _ = apply(state, 0, Action(NEXT_HAND))
            continue
        seat = state.hand.turn
        t0 = clock()
        options = legal_actions(state, seat)
        t1 = clock()
        state, _ = apply(state, seat, rng.choice([a for a in options if a.kind != RESIGN]))
        t2 = clock()
        view(state, 0)
        view(state, 1)
        t3 = clock()
        legal_ns += t1 - t0
        apply_ns += t2 - t1
        view_ns += t3 - t2
        moves += 1
        if state.hand.phase == OVER:
            played += 1
    return {
        "per_move_legal_actions_us": round((legal_ns / moves - reading) / 1000, 2),
        "per_move_apply_us": round((apply_ns / moves - reading) / 1000, 2),
        "per_move_two_seat_views_us": round((view_ns / moves - reading) / 1000, 2),
    }


def random_play(hands: int, seed: int = 7) -> dict[str, float]:
    """Play ``hands`` full hands with uniformly random legal actions; hands/s and actions/s."""
    return play_figures("random_play", hands, *our_player(seed)(hands))


def play_figures(
    prefix: str, hands: int, actions: int, wall: float, cpu: float
) -> dict[str, float]:
    """Hands per second of wall time and of this process's CPU time (the figure to trust on a
    shared machine: it leaves out the time other processes held the core)."""
    return {
        f"{prefix}_hands_per_s": round(hands / wall, 1),
        f"{prefix}_hands_per_cpu_s": round(hands / cpu, 1),
        f"{prefix}_actions_per_s": round(actions / wall, 1),
        f"{prefix}_actions_per_hand": round(actions / hands, 1),
    }


def side_by_side_play(players: dict[str, tuple[Player, int]], rounds: int) -> dict[str, float]:
    """Each player plays its hands in ``rounds`` turns, taking turns, so load hits all alike."""
    actions = dict.fromkeys(players, 0)
    wall = dict.fromkeys(players, 0.0)
    cpu = dict.fromkeys(players, 0.0)
    for _ in range(rounds):
        for name, (play, hands) in players.items():
            took, spent, used = play(max(1, hands // rounds))
            actions[name] += took
            wall[name] += spent
            cpu[name] += used
    out: dict[str, float] = {}
    for name, (_, hands) in players.items():
        played = max(1, hands // rounds) * rounds
        out.update(play_figures(name, played, actions[name], wall[name], cpu[name]))
    return out


def load_openspiel() -> tuple[ModuleType | None, str]:
    """``pyspiel`` if it can be imported here, else None and why."""
    try:
        return importlib.import_module("pyspiel"), ""
    except ImportError as exc:
        return None, (
            f"OpenSpiel comparison skipped: pyspiel is not importable ({exc}); "
            "pip install open-spiel into a separate venv (or this one) to compare"
        )


def openspiel_cards(mask: int) -> list[int]:
    """A hand mask as OpenSpiel's card ints."""
    out: list[int] = []
    while mask:
        low = mask & -mask
        mask ^= low
        c = low.bit_length() - 1
        out.append(_OPENSPIEL_SUIT[c >> 4] * 13 + (c & 15))
    return out


def openspiel_min_deadwood(pyspiel: ModuleType) -> Callable[[list[int]], object]:
    """``GinRummyUtils.min_deadwood``, called on OpenSpiel's card lists (made beforehand)."""
    return pyspiel.gin_rummy.GinRummyUtils(13, 4, 10).min_deadwood  # type: ignore[no-any-return]


def shuffled_codes(mask: int) -> list[str]:
    """The codes of a mask's cards in an order of their own (seeded by the mask)."""
    out = mask_codes(mask)
    random.Random(mask).shuffle(out)
    return out


def openspiel_agrees(pyspiel: ModuleType, hands: list[int]) -> int:
    """How many 10-card ``hands`` OpenSpiel gives another minimum deadwood than ours (want 0)."""
    utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
    return sum(utils.min_deadwood(openspiel_cards(m)) != deadwood(m) for m in hands)


def openspiel_player(pyspiel: ModuleType, seed: int = 7) -> Player:
    """OpenSpiel's ``gin_rummy`` (one game is one hand) with uniformly random legal actions."""
    rng = random.Random(seed)
    game = pyspiel.load_game("gin_rummy")

    def play(hands: int) -> tuple[int, float, float]:
        actions = 0
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(hands):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                    state.apply_action(rng.choices(outcomes, probs)[0])
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
                    actions += 1
        return actions, time.perf_counter() - start, time.process_time() - cpu

    return play


def load_before(rev: str) -> ModuleType:
    """``app/engine/melds.py`` as it was at git revision ``rev``, as a module beside ours."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(
        ["git", "show", f"{rev}:app/engine/melds.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = ModuleType(f"melds_at_{rev}")
    exec(compile(source, f"{rev}:app/engine/melds.py", "exec"), module.__dict__)
    return module


def _ratio(ours: float, theirs: float | None) -> str:
    return "" if theirs is None else f"{ours / theirs:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--hands", type=int, default=HANDS, help="distinct hands per set")
    parser.add_argument("--play", type=int, default=2000, help="hands of our random play")
    parser.add_argument(
        "--openspiel-play", type=int, default=300, help="hands of OpenSpiel's random play"
    )
    parser.add_argument(
        "--before",
        metavar="REV",
        help="also time best_arrangement as app/engine/melds.py was at git revision REV",
    )
    args = parser.parse_args()
    before = load_before(args.before) if args.before else None
    pyspiel, why = load_openspiel()
    if pyspiel is None:
        print(why)

    figures: dict[str, float] = {}
    sets = bench_hands(args.hands)
    print(
        f"\nbest_arrangement: median CPU µs per call, batches of {BATCH} distinct hands, "
        "cache cleared each pass"
    )
    head = (
        f"{'hands':<12}{'ours µs':>10}{'from codes µs':>15}{'OpenSpiel µs':>14}"
        f"{'ours/OpenSpiel':>16}{'codes/OpenSpiel':>17}"
    )
    if before is not None:
        head += f"{f'at {args.before} µs':>22}"
    print(head)
    caches: tuple[Callable[[], None], ...] = (_search.cache_clear,)
    if before is not None:
        caches += (before._search.cache_clear,)
    for name, masks in sets.items():
        calls: dict[str, Callable[[Any], object]] = {
            "ours": best_arrangement,
            "ours_codes": best_arrangement,
        }
        # The codes as the server gets them (canonical, in no particular order), made beforehand.
        inputs: dict[str, list[Any]] = {"ours_codes": [shuffled_codes(m) for m in masks]}
        if pyspiel is not None:
            calls["openspiel"] = openspiel_min_deadwood(pyspiel)
            inputs["openspiel"] = [openspiel_cards(m) for m in masks]
        if before is not None:
            calls["before"] = before.best_arrangement
        timed = side_by_side_us(calls, masks, caches=caches, inputs=inputs)
        ours, codes = timed["ours"], timed["ours_codes"]
        figures[f"best_arrangement_{name}_us"] = round(ours, 3)
        figures[f"best_arrangement_codes_{name}_us"] = round(codes, 3)
        theirs: float | None = None
        if pyspiel is not None:
            theirs = timed["openspiel"]
            figures[f"openspiel_min_deadwood_{name}_us"] = round(theirs, 3)
            figures[f"ratio_{name}"] = round(ours / theirs, 3)
            figures[f"ratio_codes_{name}"] = round(codes / theirs, 3)
        shown = "" if theirs is None else f"{theirs:.2f}"
        line = (
            f"{name:<12}{ours:>10.2f}{codes:>15.2f}{shown:>14}{_ratio(ours, theirs):>16}"
            f"{_ratio(codes, theirs):>17}"
        )
        if before is not None:
            figures[f"before_best_arrangement_{name}_us"] = round(timed["before"], 3)
            line += f"{timed['before']:>22.2f}"
        print(line)
    if pyspiel is not None:
        differ = sum(openspiel_agrees(pyspiel, sets[name]) for name in ("random_10", "dense_10"))
        figures["openspiel_disagreements_10_cards"] = differ
        print(f"10-card hands where OpenSpiel's minimum deadwood differs from ours: {differ}")

    players = {"random_play": (our_player(), args.play)}
    if pyspiel is not None:
        players["openspiel_random_play"] = (openspiel_player(pyspiel), args.openspiel_play)
    figures.update(side_by_side_play(players, rounds=10))
    print("\nrandom legal play: full hands per second (legal actions at every decision)")
    print(f"{'':<16}{'ours':>10}{'OpenSpiel':>14}{'ours/OpenSpiel':>16}")
    for label, unit in (("hands/s", "per_s"), ("hands/CPU s", "per_cpu_s")):
        ours_play = figures[f"random_play_hands_{unit}"]
        theirs_play = figures.get(f"openspiel_random_play_hands_{unit}")
        shown = "" if theirs_play is None else f"{theirs_play:.1f}"
        print(f"{label:<16}{ours_play:>10.1f}{shown:>14}{_ratio(ours_play, theirs_play):>16}")
    per_move = engine_per_move(max(1, args.play // 4))
    figures.update(per_move)
    print("\nthe engine's part of a server move (CPU µs per move, random play)")
    for key, value in per_move.items():
        print(f"{key.removeprefix('per_move_').removesuffix('_us'):<22}{value:>10.2f}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
