"""Swiss pairing: score groups, no repeated pairing, one bye for an odd number, first dealer
balanced as colours are in chess.

Pure: ``pair_round`` takes who plays (best first: score, then rating), the pairs already
played, who had a bye and each entrant's first-deal balance, and returns the round's pairs
(the first of each pair deals the first hand) and its bye.

1. Order the entrants by score, then rating (the seed order breaks a tie).
2. An odd number: the bye goes to the lowest-ranked entrant who has not had one, provided the
   rest can still be paired without a repeat (when no such entrant leaves a round without a
   repeat, to the lowest-ranked who leaves one).
3. Pair from the top: each entrant meets, among the unpaired, first those of its own score
   group, and within it one due the other first deal, then the one half the group further
   down (the top half meets the bottom half, as in the Dutch system); a pair already played
   is never chosen. A depth-first search
   undoes a choice that leaves the rest unpairable, so a round without a repeat is found
   whenever one exists (only when none exists, a repeat is allowed). Of two entrants who
   both dealt first (or second) twice more than the other way, one would go to three: that
   pair is avoided as long as a round without it exists.
4. Of each pair, the entrant who dealt first less often (first deals minus second) deals
   first; on equal balance, the higher-ranked one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# The search gives up on a perfect round after this many steps (then allows repeats); far
# beyond what 256 entrants over a dozen rounds need.
SEARCH_STEPS = 200_000


@dataclass(frozen=True, slots=True)
class Player:
    """An entrant as the pairing sees it."""

    id: str
    score: float
    rating: float


@dataclass(frozen=True, slots=True)
class Round:
    """A round's pairs (first: deals the first hand) and the entrant with the bye, if any."""

    pairs: list[tuple[str, str]]
    bye: str | None


def pair_key(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def ranked(players: Iterable[Player]) -> list[Player]:
    """Best first: score, then rating, then id (a stable order for equal entrants)."""
    return sorted(players, key=lambda p: (-p.score, -p.rating, p.id))


def pair_round(
    players: Sequence[Player],
    played: set[frozenset[str]],
    had_bye: set[str],
    balance: Mapping[str, int],
) -> Round:
    """The next round (see the module docstring)."""
    order = ranked(players)
    fresh, again = _bye_candidates(order, had_bye)
    # In order: no repeat, then a bye to one who had none, then the first-deal rule.
    passes = [(False, fresh, False), (False, fresh, True), (False, again, False),
              (False, again, True), (True, fresh + again, True)]  # fmt: skip
    for allow_repeats, byes, allow_clash in passes:
        for bye in byes:
            rest = [p for p in order if p.id != bye]
            pairs = _pair(rest, played, balance, allow_repeats=allow_repeats,
                          allow_clash=allow_clash)  # fmt: skip
            if pairs is not None:
                return Round([_dealer_first(a, b, balance) for a, b in pairs], bye)
    raise AssertionError("a round can always be paired when repeats are allowed")


def _clash(a: str, b: str, balance: Mapping[str, int]) -> bool:
    """Both due the same side by 2 or more: one of them would go to 3 (chess's absolute
    colour rule)."""
    x, y = balance.get(a, 0), balance.get(b, 0)
    return (x >= 2 and y >= 2) or (x <= -2 and y <= -2)


def _bye_candidates(
    order: list[Player], had_bye: set[str]
) -> tuple[list[str | None], list[str | None]]:
    """Who may have the bye, lowest-ranked first: those who had none, then the others (no
    bye at all for an even number)."""
    if len(order) % 2 == 0:
        return [None], []
    bottom_up = [p.id for p in reversed(order)]
    return [i for i in bottom_up if i not in had_bye], [i for i in bottom_up if i in had_bye]


def _pair(
    order: list[Player],
    played: set[frozenset[str]],
    balance: Mapping[str, int],
    *,
    allow_repeats: bool,
    allow_clash: bool,
) -> list[tuple[Player, Player]] | None:
    steps = [0]

    def search(left: list[Player]) -> list[tuple[Player, Player]] | None:
        if not left:
            return []
        steps[0] += 1
        if steps[0] > SEARCH_STEPS:
            return None
        top, others = left[0], left[1:]
        for other in _preferred(top, others, balance):
            if not allow_repeats and pair_key(top.id, other.id) in played:
                continue
            if not allow_clash and _clash(top.id, other.id, balance):
                continue
            rest = search([p for p in others if p is not other])
            if rest is not None:
                return [(top, other), *rest]
        return None

    return search(order)


def _preferred(top: Player, others: list[Player], balance: Mapping[str, int]) -> list[Player]:
    """Opponents for ``top`` in order of preference: own score group first, one due the other
    side first, at half the group's size further down; then the nearest scores."""
    group = [p for p in others if p.score == top.score]
    half = (len(group) + 1) // 2  # ``top`` itself is the group's first
    mine = balance.get(top.id, 0)

    def key(item: tuple[int, Player]) -> tuple[float, int, int, int]:
        index, p = item
        offset = abs(index + 1 - half) if p.score == top.score else 0
        theirs = balance.get(p.id, 0)
        same_side = int(mine * theirs > 0)
        return (abs(top.score - p.score), same_side, offset, index)

    return [p for _, p in sorted(enumerate(others), key=key)]


def _dealer_first(a: Player, b: Player, balance: Mapping[str, int]) -> tuple[str, str]:
    if balance.get(b.id, 0) < balance.get(a.id, 0):
        return b.id, a.id
    return a.id, b.id
