"""The match's state and its vocabulary: phases, actions, events, a hand, a match.

Plain data with its own (de)serialisation; what changes it is ``app.engine.game``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.engine.cards import (
    card_ids,
    code,
    codes,
    codes_mask,
    mask_codes,
    parse_card,
)
from app.engine.errors import RuleError
from app.engine.rules import Ruleset

# Hand phases.
UPCARD_OFFER = "upcard_offer"
DRAW = "draw"
DISCARD = "discard"
OVER = "over"

# Action kinds.
TAKE_UPCARD = "take_upcard"
PASS = "pass"
DRAW_STOCK = "draw_stock"
DRAW_DISCARD = "draw_discard"
DISCARD_CARD = "discard"
KNOCK = "knock"
BIG_GIN = "big_gin"
NEXT_HAND = "next_hand"
RESIGN = "resign"
ACTION_KINDS = (
    TAKE_UPCARD,
    PASS,
    DRAW_STOCK,
    DRAW_DISCARD,
    DISCARD_CARD,
    KNOCK,
    BIG_GIN,
    NEXT_HAND,
    RESIGN,
)
_CARD_ACTIONS = (DISCARD_CARD, KNOCK)

PLAYING = "playing"
FINISHED = "finished"

SPADES = 3


@dataclass(frozen=True, slots=True)
class Action:
    """A move: its kind and, for discard and knock, the card."""

    kind: str
    card: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.card is not None:
            out["card"] = code(self.card)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Action:
        """An action from untrusted input; raises RuleError on a bad kind or card."""
        kind = data.get("kind")
        if kind not in ACTION_KINDS:
            raise RuleError("unknown_action", f"unknown action {kind!r}")
        raw = data.get("card")
        if kind in _CARD_ACTIONS:
            if raw is None:
                raise RuleError("card_required", f"{kind} needs a card")
            return cls(str(kind), _parse(raw))
        return cls(str(kind))


def _parse(raw: object) -> int:
    if not isinstance(raw, str | int) or isinstance(raw, bool):
        raise RuleError("invalid_card", f"not a card: {raw!r}")
    try:
        return int(parse_card(raw))
    except ValueError:
        raise RuleError("invalid_card", f"not a card: {raw!r}") from None


@dataclass(slots=True)
class Event:
    """What happened: ``public`` for everyone; ``private[seat]`` adds what only that seat sees."""

    type: str
    public: dict[str, Any]
    private: dict[int, dict[str, Any]] = field(default_factory=dict)

    def visible_to(self, seat: int | None) -> bool:
        """Whether the event carries anything for ``seat`` (None: a spectator); an event that
        does not reaches that recipient as a numbered ``skip``."""
        return bool(self.public) or (seat is not None and seat in self.private)

    def for_recipient(self, seat: int | None) -> dict[str, Any]:
        """The event as ``seat`` (None: a spectator) may see it."""
        out = {"type": self.type, **self.public}
        if seat is not None and seat in self.private:
            out.update(self.private[seat])
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "public": self.public,
            "private": {str(k): v for k, v in self.private.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        return cls(data["type"], data["public"], {int(k): v for k, v in data["private"].items()})


@dataclass(slots=True)
class HandState:
    """One deal. Hands are masks; stock and discard pile are card-id lists, top last."""

    number: int
    seed: str
    nonce: str
    dealer: int
    hands: list[int]
    stock: list[int]
    discard_pile: list[int]
    phase: str
    turn: int
    passes: int
    drawn_from_discard: int | None
    upcard_refused: bool
    taken_from_discard: list[int]
    first_upcard: int
    knock_limit: int
    multiplier: int
    result: dict[str, Any] | None = None

    def copy(self) -> HandState:
        return HandState(
            self.number,
            self.seed,
            self.nonce,
            self.dealer,
            list(self.hands),
            list(self.stock),
            list(self.discard_pile),
            self.phase,
            self.turn,
            self.passes,
            self.drawn_from_discard,
            self.upcard_refused,
            list(self.taken_from_discard),
            self.first_upcard,
            self.knock_limit,
            self.multiplier,
            self.result,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "seed": self.seed,
            "nonce": self.nonce,
            "dealer": self.dealer,
            "hands": [mask_codes(m) for m in self.hands],
            "stock": codes(self.stock),
            "discard_pile": codes(self.discard_pile),
            "phase": self.phase,
            "turn": self.turn,
            "passes": self.passes,
            "drawn_from_discard": code_or_none(self.drawn_from_discard),
            "upcard_refused": self.upcard_refused,
            "taken_from_discard": [mask_codes(m) for m in self.taken_from_discard],
            "first_upcard": code(self.first_upcard),
            "knock_limit": self.knock_limit,
            "multiplier": self.multiplier,
            "result": self.result,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HandState:
        return cls(
            d["number"],
            d["seed"],
            d["nonce"],
            d["dealer"],
            [codes_mask(h) for h in d["hands"]],
            card_ids(d["stock"]),
            card_ids(d["discard_pile"]),
            d["phase"],
            d["turn"],
            d["passes"],
            None if d["drawn_from_discard"] is None else int(parse_card(d["drawn_from_discard"])),
            d["upcard_refused"],
            [codes_mask(h) for h in d["taken_from_discard"]],
            int(parse_card(d["first_upcard"])),
            d["knock_limit"],
            d["multiplier"],
            d["result"],
        )


@dataclass(slots=True)
class MatchState:
    """A match: the ruleset, the secret seed, scores, the current hand and how it ended."""

    rules: Ruleset
    seed: str
    scores: list[int]
    hands_won: list[int]
    hand: HandState
    next_dealer: int | None = None
    status: str = PLAYING
    winner: int | None = None
    finish_reason: str | None = None
    final_scores: list[int] | None = None
    bonuses: list[dict[str, int]] | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    # Whether each seat has made a move of this match (any action ``apply`` accepted from it).
    moved: list[bool] = field(default_factory=lambda: [False, False])

    def copy(self) -> MatchState:
        return MatchState(
            self.rules,
            self.seed,
            list(self.scores),
            list(self.hands_won),
            self.hand.copy(),
            self.next_dealer,
            self.status,
            self.winner,
            self.finish_reason,
            None if self.final_scores is None else list(self.final_scores),
            self.bonuses,
            list(self.history),
            list(self.moved),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "scores": list(self.scores),
            "hands_won": list(self.hands_won),
            "hand": self.hand.to_dict(),
            "next_dealer": self.next_dealer,
            "status": self.status,
            "winner": self.winner,
            "finish_reason": self.finish_reason,
            "final_scores": self.final_scores,
            "bonuses": self.bonuses,
            "history": list(self.history),
            "moved": list(self.moved),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchState:
        return cls(
            Ruleset.from_dict(d["rules"]),
            d["seed"],
            list(d["scores"]),
            list(d["hands_won"]),
            HandState.from_dict(d["hand"]),
            d["next_dealer"],
            d["status"],
            d["winner"],
            d["finish_reason"],
            d["final_scores"],
            d["bonuses"],
            list(d["history"]),
            # A snapshot from before ``moved`` was kept: its seats count as having moved, so
            # a match already under way is never aborted (``abort``).
            list(d.get("moved", [True, True])),
        )


def code_or_none(c: int | None) -> str | None:
    """A card's code, or None for no card."""
    return None if c is None else code(c)
