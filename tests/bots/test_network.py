"""LUNA's value network: its features see only the seat's own information, the numpy
inference computes the MLP, the committed weights load, and self-play and training run."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.bots.features import PLANES, WIDTH, Terms, after_discard, expand, features
from app.bots.knowledge import build
from app.bots.levels import HardBot
from app.bots.network import (
    CHOICES,
    MARGIN,
    SCALE,
    WEIGHTS,
    Network,
    discard_values,
    draw_values,
    guide_discards,
    shipped,
)
from app.engine import MatchState, parse_card
from app.engine.views import seat_view
from tests.engine.builders import play_seen, position
from training.selfplay import generate, job, record_match

MINE = "2C 5C 9C 3D 7D JD 4H 8H QS KS"
# Two opponent hands (and so two stocks) seat 0 cannot tell apart.
HIDDEN = ("AH 2H 3S 4S 5S 9S TS JS QD KD", "AD 6H 7H 7S 8S 6C JH TD QH KD")


def _to_discard(opp: str) -> tuple[MatchState, list[Any]]:
    """Seat 0 to discard, after the opponent took the upcard and threw the KD."""
    state = position(MINE, opp, "6S", stock_top="AS", dealer=1)
    return play_seen(
        state,
        (0, "pass", None),
        (1, "take_upcard", None),
        (1, "discard", "KD"),
        (0, "draw_stock", None),
    )


def _rows(state: MatchState, seen: list[Any]) -> np.ndarray[Any, Any]:
    view = seat_view(state, 0)
    return features([build(view, seen)], Terms.of(view))


def test_features_never_depend_on_hidden_cards() -> None:
    (a, seen_a), (b, seen_b) = _to_discard(HIDDEN[0]), _to_discard(HIDDEN[1])
    assert a.hand.hands[1] != b.hand.hands[1] and a.hand.stock != b.hand.stock
    assert np.array_equal(_rows(a, seen_a), _rows(b, seen_b))
    # The stock in another order: the same again.
    c = a.copy()
    c.hand.stock = c.hand.stock[::-1]
    assert np.array_equal(_rows(a, seen_a), _rows(c, seen_a))
    # And what the seat does see shows: its own hand.
    d = a.copy()
    d.hand.hands[0] ^= 1 << int(parse_card("2C")) | 1 << int(parse_card(HIDDEN[0][:2]))
    assert not np.array_equal(_rows(a, seen_a), _rows(d, seen_a))


def test_a_discard_is_valued_on_the_position_the_next_view_shows() -> None:
    state, seen = _to_discard(HIDDEN[0])
    view = seat_view(state, 0)
    k = build(view, seen)
    after, more = play_seen(state, (0, "discard", "KS"))
    expected = _rows(after, seen + more)
    got = features([after_discard(k, int(parse_card("KS")))], Terms.of(view))
    assert got.shape == (1, WIDTH)
    assert np.array_equal(got, expected)


def _reference(net: Network, x: np.ndarray[Any, Any]) -> list[float]:
    """The MLP computed number by number."""
    out = []
    for row in x.tolist():
        h = row
        for i, (w, b) in enumerate(zip(net.weights, net.biases, strict=True)):
            h = [
                sum(h[r] * float(w[r][c]) for r in range(len(h))) + float(b[c])
                for c in range(len(b))
            ]
            if i < len(net.weights) - 1:
                h = [max(0.0, v) for v in h]
        out.append(h[0] * SCALE)
    return out


def test_numpy_inference_is_the_mlp(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    shapes = [(WIDTH, 16), (16, 8), (8, 1)]
    arrays: dict[str, Any] = {}
    for i, (n, m) in enumerate(shapes, 1):
        arrays[f"w{i}"] = rng.normal(0, 0.3, (n, m)).astype(np.float32)
        arrays[f"b{i}"] = rng.normal(0, 0.3, m).astype(np.float32)
    path = tmp_path / "net.npz"
    arrays["meta"] = np.array('{"seed": 3}')
    np.savez(path, **arrays)
    net = Network.load(path)
    assert net.meta == {"seed": 3}
    x = rng.integers(0, 2, (5, WIDTH)).astype(np.float32)
    got = net(x)
    assert got.shape == (5,)
    assert np.allclose(got, _reference(net, x), rtol=1e-4, atol=1e-3)
    assert len(set(np.round(got, 3).tolist())) > 1  # the rows are told apart


def test_a_network_of_the_wrong_width_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.npz"
    np.savez(path, w1=np.zeros((WIDTH - 1, 1), np.float32), b1=np.zeros(1, np.float32))
    with pytest.raises(ValueError, match="inputs"):
        Network.load(path)


def test_the_committed_network_loads_with_its_record() -> None:
    net = shipped()
    assert [w.shape for w in net.weights] == [(WIDTH, 64), (64, 32), (32, 1)]
    assert [b.shape for b in net.biases] == [(64,), (32,), (1,)]
    assert net.meta["positions"] > 100_000 and "training.train" in net.meta["command"]
    assert net.meta["held_out_mse"] < net.meta["constant_mse"]  # it learned something
    assert WEIGHTS.stat().st_size < 200_000


def test_the_guides_reorder_only_the_judgements_best_discards() -> None:
    state, seen = _to_discard(HIDDEN[0])
    view = seat_view(state, 0)
    k = build(view, seen)
    ranked = [int(parse_card(c)) for c in view["legal"]["discards"]]
    head = ranked[:CHOICES]
    values = discard_values(shipped(), k, view, head)
    by_net = guide_discards("net", k, view, ranked)
    assert by_net[CHOICES:] == ranked[CHOICES:]  # the rest as the judgements had them
    assert [values[head.index(c)] for c in by_net[:CHOICES]] == sorted(values, reverse=True)
    mixed = guide_discards("mix", k, view, ranked)
    best = by_net[0]
    if values[head.index(best)] >= values[0] + MARGIN:
        assert mixed == [best, *(c for c in ranked if c != best)]
    else:
        assert mixed == ranked
    assert guide_discards("", k, view, ranked) == ranked


def test_the_draw_is_judged_on_the_card_taken_and_the_stock_averaged() -> None:
    state, seen = _to_discard(HIDDEN[0])
    state, more = play_seen(
        state, (0, "discard", "KS"), (1, "draw_stock", None), (1, "discard", "QD")
    )
    view = seat_view(state, 0)
    k = build(view, seen + more)
    assert k.top == int(parse_card("QD"))
    take, stock = draw_values(shipped(), k, view)
    # Taking the queen of diamonds (beside the jack) and shedding the costliest deadwood
    # card, the king of spades being gone: the queen of spades.
    taken = dataclasses.replace(
        k, hand=k.hand | 1 << k.top, discard_pile=k.discard_pile[:-1], my_draws=k.my_draws + 1
    )
    rows = features([after_discard(taken, int(parse_card("QS")))], Terms.of(view))
    assert take == pytest.approx(float(shipped()(rows)[0]), abs=1e-4)
    assert take != pytest.approx(stock)


@pytest.mark.parametrize("guide", ["net", "mix"])
def test_a_guided_hard_plays_legal_moves(guide: str) -> None:
    state, seen = _to_discard(HIDDEN[0])
    view = seat_view(state, 0)
    move = HardBot(guide=guide).choose(view, seen)
    assert move["kind"] in view["legal"]["actions"]
    assert move["card"] in view["legal"]["discards"]
    with pytest.raises(ValueError, match="guide"):
        HardBot(guide="oracle")


def test_self_play_records_labelled_positions_of_ten_cards() -> None:
    for i in (0, 4):
        masks, scalars, labels = record_match(job(1, i))
        assert len(labels) > 20
        assert masks.shape == (len(labels), PLANES) and scalars.shape[0] == len(labels)
        assert {int(m).bit_count() for m in masks[:, 0]} == {10}  # to draw or just discarded
        assert (labels > 0).any() and (labels < 0).any()
        # Whose turn: both kinds of position are there.
        assert set(scalars[:, 0].tolist()) == {0.0, 1.0}


def test_training_runs_end_to_end(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    train = pytest.importorskip("training.train")
    data = generate(seed=5, matches=2, workers=1)
    net, errors = train.fit(data, seed=5, epochs=1)
    assert set(errors) == {"held_out_mse", "train_mse", "constant_mse"}
    path = tmp_path / "net.npz"
    train.export(net, path, {"positions": len(data[2])})
    loaded = Network.load(path)
    x = expand(data[0][:8], data[1][:8])
    with torch.no_grad():
        want = net(torch.from_numpy(x))[:, 0].numpy() * SCALE
    assert np.allclose(loaded(x), want, rtol=1e-4, atol=1e-3)


def test_the_server_and_the_product_levels_load_no_numpy() -> None:
    """numpy is a development dependency (the server's image has none): the application, its
    bot pool and every product level, playing a decision, never import it."""
    code = (
        "import sys\n"
        "import app.main, app.service.workers.bot_pool\n"
        "from app.bots import get_bot\n"
        "from app.engine import make_ruleset, new_match\n"
        "from app.engine.views import seat_view\n"
        "state, events = new_match(make_ruleset('standard'), 'no-numpy')\n"
        "seat = state.hand.turn\n"
        "seen = [e.for_recipient(seat) for e in events]\n"
        "for level in ('easy', 'medium', 'hard'):\n"
        "    get_bot(level).choose(seat_view(state, seat), seen)\n"
        "print('numpy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False", out.stdout + out.stderr
