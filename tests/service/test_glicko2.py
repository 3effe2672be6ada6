"""Glicko-2 against Glickman's worked example, and the rules built on it."""

from __future__ import annotations

import pytest

from app.service import ratings
from app.table.glicko2 import SCALE, Game, Glicko, inflate, rate

PLAYER = Glicko(1500, 200, 0.06)
OPPONENTS = [
    (Glicko(1400, 30, 0.06), 1.0),
    (Glicko(1550, 100, 0.06), 0.0),
    (Glicko(1700, 300, 0.06), 0.0),
]


def test_glickmans_worked_example_to_the_published_digits() -> None:
    after = rate(PLAYER, [Game(o, s) for o, s in OPPONENTS], tau=0.5)
    # The paper works on the Glicko-2 scale to four decimals: μ' = -0.2069, φ' = 0.8722.
    mu, phi = (after.rating - 1500) / SCALE, after.deviation / SCALE
    assert round(mu, 4) == -0.2069 and round(phi, 4) == 0.8722
    # ... and publishes r' = 1464.06 (from μ' rounded: the unrounded value is 1464.05),
    # RD' = 151.52, σ' = 0.05999.
    assert round(round(mu, 4) * SCALE + 1500, 2) == 1464.06
    assert after.rating == pytest.approx(1464.05, abs=0.005)
    assert round(after.deviation, 2) == 151.52
    # The paper writes the first five decimals of σ' = 0.0599960.
    assert int(after.volatility * 100_000) == 5999
    assert after.volatility == pytest.approx(0.059996, abs=5e-7)


def test_a_period_without_games_only_grows_the_deviation() -> None:
    idle = rate(PLAYER, [], tau=0.5)
    assert idle.rating == 1500 and idle.volatility == 0.06
    assert idle.deviation == pytest.approx(((200 / SCALE) ** 2 + 0.06**2) ** 0.5 * SCALE)
    assert inflate(PLAYER, 1, 350) == idle
    assert inflate(PLAYER, 0, 350) == PLAYER
    assert inflate(PLAYER, 10_000, 350).deviation == 350


def test_a_win_raises_a_loss_lowers_and_an_upset_moves_more() -> None:
    even = Glicko(1500, 100, 0.06)
    won = rate(even, [Game(even, 1.0)], 0.5)
    lost = rate(even, [Game(even, 0.0)], 0.5)
    assert won.rating - 1500 == pytest.approx(1500 - lost.rating)
    assert won.rating > 1500 and won.deviation < 100
    upset = rate(even, [Game(Glicko(1800, 100, 0.06), 1.0)], 0.5)
    assert upset.rating - 1500 > won.rating - 1500


def test_bot_ratings_are_anchored_and_ordered() -> None:
    bots = ratings.BOT_RATINGS
    assert bots["medium"] == 1500
    assert bots["easy"] < bots["medium"] < bots["hard"]
    # 67.75 % for medium over easy is about 129 points; 61.5 % for hard over medium about 81.
    assert bots["medium"] - bots["easy"] == 129 and bots["hard"] - bots["medium"] == 81
