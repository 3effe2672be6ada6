"""Arena pairing: whoever is free is paired again at once, closest in score, then rating.

Pure: ``pair_free`` takes the free entrants (not playing, not paused: an arena's withdrawal
is a pause) with their tournament score, rating, last opponent and first-deal balance, and
returns pairs (the first of each pair deals the first hand). Best first (score, then rating),
each entrant meets the nearest one below it who was not its last opponent (nor it theirs); one
left without such a partner waits for the next free entrant. Scoring
(``app.table.standings``): a win is worth ``WIN`` points, and ``STREAK_WIN`` from the third win
in a row until the next loss.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

WIN = 2
STREAK_WIN = 4
STREAK_AFTER = 2  # wins in a row after which a win is worth STREAK_WIN


@dataclass(frozen=True, slots=True)
class Free:
    """A free entrant as the pairing sees it."""

    id: str
    score: float
    rating: float
    last_opponent: str | None


def pair_free(free: Sequence[Free], balance: Mapping[str, int]) -> list[tuple[str, str]]:
    """Pairs among ``free`` (see the module docstring)."""
    order = sorted(free, key=lambda p: (-p.score, -p.rating, p.id))
    pairs: list[tuple[str, str]] = []
    taken: set[str] = set()
    for i, top in enumerate(order):
        if top.id in taken:
            continue
        for other in order[i + 1 :]:
            if other.id in taken or top.last_opponent == other.id or other.last_opponent == top.id:
                continue
            taken.update((top.id, other.id))
            if balance.get(other.id, 0) < balance.get(top.id, 0):
                pairs.append((other.id, top.id))
            else:
                pairs.append((top.id, other.id))
            break
    return pairs
