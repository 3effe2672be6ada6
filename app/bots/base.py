"""The one bot interface: a seat's view and its redacted events in, one legal action out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

View = Mapping[str, Any]
Events = Sequence[Mapping[str, Any]]


class NoMoveError(Exception):
    """The seat has nothing to do now (not its turn, or the match is over)."""


class Bot(Protocol):
    """A player that sees exactly what its seat's API client sees.

    ``view`` is ``seat_view(state, seat)`` as JSON; ``events`` are the events this seat has
    received (``Event.for_recipient(seat)``): the server, the bot kit and the arena give those of
    the current match so far (every hand; hard reads the opponent's habits from the past ones);
    a bot must do with as few as the current hand's. The answer is an action as a client sends
    it, e.g. ``{"kind": "discard", "card": "7H"}``; it is always in the view's legal actions.
    Raises NoMoveError when the seat has no move but to resign.
    """

    level: str

    def choose(self, view: View, events: Events) -> dict[str, Any]: ...


def has_move(view: View) -> bool:
    """Whether the seat of ``view`` has something to do other than resign."""
    return any(kind != "resign" for kind in view["legal"]["actions"])
