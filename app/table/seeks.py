"""Seeks: what game a seek asks for, which pool it waits in, and who is paired with whom.

Pure: no I/O, no clock (times are passed in). The lobby service (``app.service.lobby``) reads
the open seeks of a pool, asks ``pairs`` which to pair, and lets the database decide each
pairing with one conditional UPDATE (``app.store.seeks``).

A pool is one game kind: preset, rules, time control and rated together (``pool_of``): two
seeks of one pool ask for exactly the same table. Within a pool the oldest seek is served
first, with the partner whose rating is closest; a pair is acceptable while the gap between
their ratings is at most ``Widening.gap(wait)`` of the longer wait of the two (the gap grows
linearly with waiting time, from ``base`` by ``per_second`` up to ``most``), and each rating is
within the other's own range, if they set one.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import orjson

Speed = Literal["live", "correspondence"]

# A per-move clock at least this long is correspondence ("days per move").
CORRESPONDENCE_SECONDS = 86400.0


def speed_of(clock: dict[str, Any] | None) -> Speed:
    """``correspondence`` for no clock or a per-move clock of a day or more, else ``live``."""
    if clock is None:
        return "correspondence"
    if clock["control"] == "per_move" and clock["seconds"] >= CORRESPONDENCE_SECONDS:
        return "correspondence"
    return "live"


def pool_of(preset: str, rules: dict[str, Any], clock: dict[str, Any] | None, rated: bool) -> str:
    """The pool's name: readable where it can be (preset, clock, rated), with a digest of the
    full ruleset and clock so that only seeks asking for the same table share it."""
    if clock is None:
        control = "none"
    else:
        parts = [clock["control"], f"{clock['seconds']:g}"]
        if clock["control"] == "bank":
            parts += [f"{clock['bonus']:g}", f"{clock['cap']:g}"]
        control = "+".join([*parts, clock["policy"]])
    game = {"rules": rules, "clock": None if clock is None else _control_only(clock)}
    digest = hashlib.sha256(orjson.dumps(game, option=orjson.OPT_SORT_KEYS)).hexdigest()[:10]
    return f"{preset}/{control}/{'rated' if rated else 'casual'}/{digest}"


def _control_only(clock: dict[str, Any]) -> dict[str, Any]:
    keys = ("control", "seconds", "bonus", "cap", "policy", "autoplay_level")
    return {k: clock.get(k) for k in keys}


@dataclass(frozen=True, slots=True)
class Widening:
    """The rating gap a pair may have after waiting ``wait`` seconds: ``base`` at once, growing
    by ``per_second``, never above ``most``."""

    base: float = 100.0
    per_second: float = 10.0
    most: float = 600.0

    def gap(self, wait: float) -> float:
        return min(self.most, self.base + self.per_second * max(0.0, wait))


@dataclass(frozen=True, slots=True)
class Waiting:
    """An open seek of a pool, as the matcher needs it."""

    seek_id: str
    player_id: str
    rating: float
    created_at: datetime
    rating_min: float | None = None
    rating_max: float | None = None

    def accepts(self, rating: float) -> bool:
        """Whether an opponent of ``rating`` is within this seek's own range."""
        low = self.rating_min if self.rating_min is not None else float("-inf")
        high = self.rating_max if self.rating_max is not None else float("inf")
        return low <= rating <= high


def _key(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def compatible(
    a: Waiting,
    b: Waiting,
    now: datetime,
    widening: Widening,
    avoid: set[frozenset[str]] | frozenset[frozenset[str]] = frozenset(),
) -> bool:
    """Whether ``a`` and ``b`` may be paired now (never a player with themselves, nor two who
    just declined or aborted against each other: ``avoid``)."""
    if a.player_id == b.player_id or _key(a.player_id, b.player_id) in avoid:
        return False
    if not (a.accepts(b.rating) and b.accepts(a.rating)):
        return False
    wait = (now - min(a.created_at, b.created_at)).total_seconds()
    return abs(a.rating - b.rating) <= widening.gap(wait)


def pairs(
    pool: list[Waiting],
    now: datetime,
    widening: Widening,
    avoid: set[frozenset[str]] | None = None,
) -> list[tuple[Waiting, Waiting]]:
    """The pairs to make in one pool now: oldest seek first, each with the closest-rated
    compatible partner not yet taken. A player with several seeks in the pool is paired at
    most once.

    The seek served is the oldest left, so its wait is the pair's longer one and bounds the
    gap: its partner is searched outward from its rating in the pool sorted by rating, and the
    search stops past that gap (a pool of n seeks costs about n log n, not n squared)."""
    avoid = avoid or set()
    taken: set[str] = set()  # players
    made: list[tuple[Waiting, Waiting]] = []
    by_rating = sorted(pool, key=lambda w: (w.rating, w.created_at, w.seek_id))
    ratings = [w.rating for w in by_rating]
    for seek in sorted(pool, key=lambda w: (w.created_at, w.seek_id)):
        if seek.player_id in taken:
            continue
        reach = widening.gap((now - seek.created_at).total_seconds())
        best: Waiting | None = None
        for side in (_below(by_rating, ratings, seek), _above(by_rating, ratings, seek)):
            for other in side:
                gap = abs(other.rating - seek.rating)
                if gap > reach or (best is not None and gap >= abs(best.rating - seek.rating)):
                    break
                if other.player_id in taken or not compatible(seek, other, now, widening, avoid):
                    continue
                best = other
                break
        if best is not None:
            taken.update((seek.player_id, best.player_id))
            made.append((seek, best))
    return made


def _above(by_rating: list[Waiting], ratings: list[float], seek: Waiting) -> Iterator[Waiting]:
    """The seeks rated at least as high as ``seek``, closest first (``seek`` itself left out)."""
    for other in by_rating[bisect_left(ratings, seek.rating) :]:
        if other is not seek:
            yield other


def _below(by_rating: list[Waiting], ratings: list[float], seek: Waiting) -> Iterator[Waiting]:
    """The seeks rated lower than ``seek``, closest first."""
    for i in range(bisect_left(ratings, seek.rating) - 1, -1, -1):
        yield by_rating[i]
