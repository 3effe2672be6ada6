"""Glicko-2, as in Mark Glickman's "Example of the Glicko-2 system" (2013), steps 1-8.

Pure arithmetic: a ``Glicko`` (rating r, deviation RD, volatility σ on the Glicko scale) and
the results of one rating period in, the new ``Glicko`` out. The worked example of the paper
(r 1500, RD 200, σ 0.06, τ 0.5 against 1400/30 won, 1550/100 lost, 1700/300 lost) gives
r' 1464.06, RD' 151.52, σ' 0.05999 (``tests/service/test_glicko2.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 173.7178  # Glicko <-> Glicko-2 scale (400 / ln 10)
BASE = 1500.0
CONVERGENCE = 0.000001  # ε of step 5


@dataclass(frozen=True, slots=True)
class Glicko:
    """A rating on the Glicko scale: rating, deviation (RD) and volatility (σ)."""

    rating: float
    deviation: float
    volatility: float


@dataclass(frozen=True, slots=True)
class Game:
    """One result of a rating period: the opponent's rating and the score (1, 0.5 or 0)."""

    opponent: Glicko
    score: float


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def inflate(player: Glicko, periods: float, max_deviation: float) -> Glicko:
    """The rating after ``periods`` rating periods without games: φ grows by σ² a period
    (step 6 alone), at most to ``max_deviation``."""
    if periods <= 0:
        return player
    phi = player.deviation / SCALE
    grown = math.sqrt(phi * phi + periods * player.volatility**2) * SCALE
    return Glicko(player.rating, min(grown, max_deviation), player.volatility)


def rate(player: Glicko, games: Sequence[Game], tau: float) -> Glicko:
    """The player's rating after one rating period with ``games`` (steps 2-8)."""
    mu = (player.rating - BASE) / SCALE
    phi = player.deviation / SCALE
    sigma = player.volatility
    if not games:
        return Glicko(player.rating, math.sqrt(phi * phi + sigma * sigma) * SCALE, sigma)
    # Steps 3-4: estimated variance v and improvement Δ.
    inverse_v = 0.0
    gain = 0.0
    for game in games:
        mu_j = (game.opponent.rating - BASE) / SCALE
        phi_j = game.opponent.deviation / SCALE
        g = _g(phi_j)
        e = _expected(mu, mu_j, phi_j)
        inverse_v += g * g * e * (1.0 - e)
        gain += g * (game.score - e)
    v = 1.0 / inverse_v
    delta = v * gain
    new_sigma = _volatility(phi, sigma, v, delta, tau)
    # Steps 6-8.
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * gain
    return Glicko(new_mu * SCALE + BASE, new_phi * SCALE, new_sigma)


def _volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """σ' of step 5: the root of f by the Illinois algorithm (Glickman's procedure)."""
    a = math.log(sigma * sigma)
    delta2 = delta * delta
    phi2 = phi * phi

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta2 - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta2 > phi2 + v:
        big_b = math.log(delta2 - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > CONVERGENCE:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)
