"""Rulesets: every rule that differs between products, as named presets plus overrides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from operator import attrgetter
from typing import Any

from app.engine.errors import RuleError
from app.engine.settlement import LAYOFF_METHODS

FIRST_DEALERS = ("random", "seat0", "seat1")
# Fields a stored ruleset may hold that no longer exist: dropped when it is loaded.
_RETIRED = frozenset({"shutout_bonus"})  # now always twice ``game_bonus``


@dataclass(frozen=True, slots=True)
class Ruleset:
    """The fields of RULES.md §9. A bonus of 0 is off (``big_gin_bonus`` 0: no big gin).

    A shutout pays twice ``game_bonus`` (RULES.md §8): derived, so an override of the game bonus
    moves the shutout with it. ``layoff`` is how the defender lays off after a knock
    (``app.engine.settlement``): ``joint`` or ``arrange_first``.
    """

    preset: str = "standard"
    upcard_offer: bool = True
    knock_limit: int = 10
    gin_bonus: int = 25
    big_gin_bonus: int = 31
    undercut_bonus: int = 25
    dead_hand_at: int = 2
    winner_deals: bool = True
    first_dealer: str = "random"
    target: int = 100
    game_bonus: int = 0
    line_bonus: int = 0
    oklahoma: bool = False
    layoff: str = "joint"

    @property
    def shutout_bonus(self) -> int:
        """The game bonus when the loser scored nothing: doubled."""
        return 2 * self.game_bonus

    def to_dict(self) -> dict[str, Any]:
        # Every snapshot and view carries the rules: read the flat fields without asdict's
        # recursive deep copy (the values are all str, int and bool).
        return dict(zip(_FIELD_NAMES, _field_values(self), strict=True))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ruleset:
        return cls(**{k: v for k, v in data.items() if k not in _RETIRED})


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Ruleset))
_field_values = attrgetter(*_FIELD_NAMES)

PRESETS: dict[str, Ruleset] = {
    "standard": Ruleset(),
    "cardems": Ruleset(
        preset="cardems",
        upcard_offer=False,
        big_gin_bonus=0,
        dead_hand_at=0,
        first_dealer="seat1",
        layoff="arrange_first",
    ),
    "reino": Ruleset(preset="reino", game_bonus=100, line_bonus=25),
    "classic": Ruleset(preset="classic", big_gin_bonus=0, undercut_bonus=10),
    "oklahoma": Ruleset(preset="oklahoma", oklahoma=True),
}

# Allowed range of each integer field, inclusive.
RANGES: dict[str, tuple[int, int]] = {
    "knock_limit": (0, 10),
    "gin_bonus": (0, 1000),
    "big_gin_bonus": (0, 1000),
    "undercut_bonus": (0, 1000),
    "dead_hand_at": (0, 10),
    "target": (1, 10000),
    "game_bonus": (0, 5000),
    "line_bonus": (0, 1000),
}
BOOLS = frozenset({"upcard_offer", "winner_deals", "oklahoma"})
# The values each text field may take.
CHOICES: dict[str, tuple[str, ...]] = {"first_dealer": FIRST_DEALERS, "layoff": LAYOFF_METHODS}


def make_ruleset(preset: str = "standard", overrides: Mapping[str, Any] | None = None) -> Ruleset:
    """A preset with validated field overrides; raises RuleError on any bad name or value."""
    base = PRESETS.get(preset)
    if base is None:
        raise RuleError("unknown_preset", f"unknown preset {preset!r}; one of {sorted(PRESETS)}")
    if not overrides:
        return base
    names = set(_FIELD_NAMES) - {"preset"}
    clean: dict[str, Any] = {}
    for name, value in overrides.items():
        if name not in names:
            raise RuleError("invalid_ruleset", f"unknown rule field {name!r}")
        if name in BOOLS:
            if not isinstance(value, bool):
                raise RuleError("invalid_ruleset", f"{name} must be true or false")
        elif name in CHOICES:
            if value not in CHOICES[name]:
                raise RuleError("invalid_ruleset", f"{name} must be one of {CHOICES[name]}")
        else:
            low, high = RANGES[name]
            # JSON has one number type: 150.0 is the integer 150 (as JSON Schema says).
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise RuleError(
                    "invalid_ruleset", f"{name} must be an integer from {low} to {high}"
                )
        clean[name] = value
    return replace(base, **clean)
