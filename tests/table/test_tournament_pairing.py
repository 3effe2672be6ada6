"""Swiss and arena pairing as a library: properties over random fields and histories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from app.table import arena, swiss
from app.table.standings import FORMAT, VERSION, main, standings
from tests.api.helpers import JSON

ROOT = Path(__file__).resolve().parents[2]


def _field(n: int) -> list[swiss.Player]:
    return [swiss.Player(f"e{i}", 0.0, 1500.0 - i) for i in range(n)]


def _play(n: int, rounds: int, winners: st.DataObject) -> list[swiss.Round]:
    """``rounds`` Swiss rounds of ``n`` entrants, results drawn by hypothesis."""
    scores = {f"e{i}": 0.0 for i in range(n)}
    played: set[frozenset[str]] = set()
    had_bye: set[str] = set()
    balance: dict[str, int] = {}
    out = []
    for _ in range(rounds):
        field = [swiss.Player(i, scores[i], 1500.0 - int(i[1:])) for i in scores]
        r = swiss.pair_round(field, played, had_bye, balance)
        out.append(r)
        for a, b in r.pairs:
            played.add(swiss.pair_key(a, b))
            balance[a] = balance.get(a, 0) + 1
            balance[b] = balance.get(b, 0) - 1
            scores[winners.draw(st.sampled_from([a, b]))] += 1
        if r.bye is not None:
            had_bye.add(r.bye)
            scores[r.bye] += 1
    return out


def _pairable(ids: list[str], played: set[frozenset[str]]) -> bool:
    """Whether ``ids`` can all be paired with no pair of ``played`` (brute force)."""
    if not ids:
        return True
    first, rest = ids[0], ids[1:]
    return any(
        frozenset((first, o)) not in played and _pairable([x for x in rest if x != o], played)
        for o in rest
    )


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 24), data=st.data())
def test_a_swiss_round_pairs_everyone_once_or_gives_one_bye_and_repeats_only_when_it_must(
    n: int, data: st.DataObject
) -> None:
    rounds = data.draw(st.integers(1, min(n - 1 if n % 2 == 0 else n, 6)), label="rounds")
    seen: set[frozenset[str]] = set()
    byes: list[str] = []
    everyone = [f"e{i}" for i in range(n)]
    for r in _play(n, rounds, data):
        ids = [e for pair in r.pairs for e in pair] + ([r.bye] if r.bye else [])
        assert sorted(ids) == sorted(everyone)  # everyone, once
        assert (r.bye is not None) == (n % 2 == 1)
        if r.bye in byes and n <= 9:  # a second bye only when no fresh one leaves a round
            fresh = [e for e in everyone if e not in byes]
            assert not any(_pairable([e for e in everyone if e != b], seen) for b in fresh)
        if any(swiss.pair_key(a, b) in seen for a, b in r.pairs):
            # A repeat only when every round has one: after five rounds, eight entrants may
            # each have two opponents left, in a triangle and a pentagon. From twelve on, six
            # rounds always leave a round without one (Dirac: half the field left to meet).
            assert n < 12, (n, r)
            byes_possible = everyone if n % 2 else [""]
            assert not any(
                _pairable([e for e in everyone if e != b], seen) for b in byes_possible
            ), (n, r)
        seen.update(swiss.pair_key(a, b) for a, b in r.pairs)
        if r.bye:
            byes.append(r.bye)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 16).filter(lambda n: n % 2 == 0), data=st.data())
def test_first_deals_stay_balanced_like_colours(n: int, data: st.DataObject) -> None:
    rounds = min(n - 1, 5)
    balance: dict[str, int] = {}
    for r in _play(n, rounds, data):
        for a, b in r.pairs:
            balance[a] = balance.get(a, 0) + 1
            balance[b] = balance.get(b, 0) - 1
    assert all(abs(v) <= 2 for v in balance.values()), balance


def test_round_one_meets_the_top_half_with_the_bottom_half() -> None:
    r = swiss.pair_round(_field(8), set(), set(), {})
    assert sorted(frozenset(p) for p in r.pairs) == sorted(
        frozenset((f"e{i}", f"e{i + 4}")) for i in range(4)
    )


def test_the_bye_goes_to_the_lowest_ranked_who_had_none() -> None:
    field = _field(5)
    assert swiss.pair_round(field, set(), set(), {}).bye == "e4"
    assert swiss.pair_round(field, set(), {"e4"}, {}).bye == "e3"


@settings(max_examples=80, deadline=None)
@given(
    scores=st.lists(st.integers(0, 20), min_size=0, max_size=30),
    data=st.data(),
)
def test_an_arena_pairs_free_players_once_never_their_last_opponent(
    scores: list[int], data: st.DataObject
) -> None:
    ids = [f"e{i}" for i in range(len(scores))]
    last = {i: data.draw(st.sampled_from([None, *ids]), label=f"last {i}") for i in ids}
    free = [arena.Free(i, s, 1500.0, last[i]) for i, s in zip(ids, scores, strict=True)]
    pairs = arena.pair_free(free, {})
    flat = [e for p in pairs for e in p]
    assert len(flat) == len(set(flat))
    for a, b in pairs:
        assert last[a] != b and last[b] != a
    if all(v is None for v in last.values()):
        assert len(flat) >= len(ids) - 1  # all paired but one at most


def test_an_arena_pairs_the_closest_scores() -> None:
    free = [arena.Free("a", 10, 1500, None), arena.Free("b", 2, 1500, None),
            arena.Free("c", 9, 1400, None), arena.Free("d", 1, 1600, None)]  # fmt: skip
    assert sorted(frozenset(p) for p in arena.pair_free(free, {})) == sorted(
        [frozenset("ac"), frozenset("bd")]
    )


def _export(kind: str, rounds: list[list[tuple[str, str | None, str | None, str]]]) -> JSON:
    return {
        "format": FORMAT,
        "version": VERSION,
        "tournament": {"format": kind},
        "entrants": [{"id": i, "name": i.upper(), "rating": 1500.0} for i in "abcd"],
        "rounds": [
            {"number": n, "pairings": [
                {"seat0": a, "seat1": b, "winner": w, "status": s} for a, b, w, s in ps
            ]}
            for n, ps in enumerate(rounds, 1)
        ],
    }  # fmt: skip


def test_swiss_tie_breaks_buchholz_then_sonneborn_berger() -> None:
    export = _export("swiss", [
        [("a", "b", "a", "finished"), ("c", "d", "c", "finished")],
        [("a", "c", "c", "finished"), ("b", "d", "b", "finished")],
    ])  # fmt: skip
    rows = {r["entrant_id"]: r for r in standings(export)}
    assert [r["entrant_id"] for r in standings(export)] == ["c", "a", "b", "d"]
    assert rows["c"]["score"] == 2 and rows["c"]["buchholz"] == 1 + 0  # met a (1), d (0)
    assert rows["a"]["buchholz"] == 1 + 2  # met b (1) and c (2)
    assert rows["b"]["sonneborn_berger"] == 0  # beat d, who has 0
    assert rows["a"]["sonneborn_berger"] == 1  # beat b (1)
    assert rows["c"]["progress"] == [1, 2]


def test_arena_streaks_double_a_win_from_the_third_in_a_row() -> None:
    export = _export("arena", [[
        ("a", "b", "a", "finished"), ("a", "c", "a", "finished"),
        ("a", "d", "a", "finished"), ("a", "b", "b", "finished"),
        ("a", "c", "a", "finished"), ("b", "c", None, "unfinished"),
    ]])  # fmt: skip
    rows = {r["entrant_id"]: r for r in standings(export)}
    assert rows["a"]["progress"] == [2, 4, 8, 8, 10]
    assert rows["b"]["score"] == 2 and rows["b"]["played"] == 2


def test_the_standings_command_answers_help_and_reads_an_export(tmp_path: Path) -> None:
    help_ = subprocess.run(
        [sys.executable, "-m", "app.table.standings", "--help"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert help_.returncode == 0 and "usage: python -m app.table.standings" in help_.stdout
    path = tmp_path / "e.json"
    path.write_text(json.dumps(_export("swiss", [[("a", "b", "a", "finished")]])))
    assert main([str(path)]) == 0
    assert main([str(tmp_path / "missing.json")]) == 2


def test_verify_answers_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "app.engine.verify", "--help"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0 and "usage: python -m app.engine.verify" in out.stdout
