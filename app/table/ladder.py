"""The bot ladder's pairing: idle bot accounts by closest rating, varied opponents.

Pure: the scheduler (``app.service.workers.tournaments``) gives it who is free, with their
ratings and last opponents, and writes the pairs. Each bot account, lowest rated first, meets
the free entrant nearest in rating that was not its last opponent: another bot account, or an
anchor (a built-in level, ``anchor``; two anchors never meet, their ratings are fixed). An
entrant is in at most one pair.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Free:
    entrant_id: str
    rating: float
    last: str | None  # its last ladder opponent
    anchor: bool = False


def pair_free(free: list[Free]) -> list[tuple[str, str]]:
    """Pairs (``seat0``, ``seat1``): the bot account deals first against an anchor."""
    left = sorted(free, key=lambda f: (f.rating, f.entrant_id))
    taken: set[str] = set()
    pairs: list[tuple[str, str]] = []
    for bot in left:
        if bot.anchor or bot.entrant_id in taken:
            continue
        candidates = [
            other
            for other in left
            if other.entrant_id != bot.entrant_id
            and other.entrant_id not in taken
            and other.entrant_id != bot.last
            and (other.anchor or other.last != bot.entrant_id)
        ]
        if not candidates:
            continue
        best = min(candidates, key=lambda o: (abs(o.rating - bot.rating), o.anchor, o.entrant_id))
        taken |= {bot.entrant_id, best.entrant_id}
        pairs.append((bot.entrant_id, best.entrant_id))
    return pairs
