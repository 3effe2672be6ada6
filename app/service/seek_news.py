"""The lobby's news, carried by the bus to every process: to the players (``seek_closed``,
``bot_offered``) and to the lobby's listeners (``seek_added``, ``seek_removed``: ``LOBBY``)."""

from __future__ import annotations

from typing import Any

from app.bus.hub import LOBBY, Hub, Notification
from app.service import ratings


def closing(seek_id: str, status: str, reason: str | None) -> dict[str, Any]:
    """A ``seek_closed`` message's body."""
    return {"seek_id": seek_id, "status": status, "reason": reason}


def added(hub: Hub, seek: dict[str, Any]) -> None:
    hub.deliver([], [Notification(LOBBY, "seek_added", "", {"seek": seek})])


def removed(hub: Hub, seek_ids: list[str]) -> None:
    if seek_ids:
        hub.deliver([], [Notification(LOBBY, "seek_removed", "", {"seek_id": s}) for s in seek_ids])


def closed(hub: Hub, found: dict[str, Any], status: str, reason: str | None) -> None:
    """Tell the owner (and a challenge's target) and the lobby that a row closed."""
    body = closing(found["seek_id"], status, reason)
    notes = [Notification(found["player"]["id"], "seek_closed", "", body)]
    if found["target"] is not None:
        notes.append(Notification(found["target"]["id"], "seek_closed", "", body))
    hub.deliver([], notes)
    if found["mode"] == "seek":
        removed(hub, [found["seek_id"]])


def lapsed(hub: Hub, rows: list[tuple[str, str, str]]) -> None:
    """The rows ``seeks.lapse`` expired: (seek id, owner, mode) each."""
    notes = [
        Notification(owner, "seek_closed", "", closing(seek_id, "expired", None))
        for seek_id, owner, _ in rows
    ]
    hub.deliver([], notes)
    removed(hub, [seek_id for seek_id, _, mode in rows if mode == "seek"])


def bot_offered(hub: Hub, seek_id: str, player_id: str, rating: float) -> None:
    """Offer the built-in bots to a seek's owner, the closest rating suggested."""
    level = min(ratings.BOT_RATINGS, key=lambda lv: abs(ratings.BOT_RATINGS[lv] - rating))
    offer = {"seek_id": seek_id, "suggested": level, "bots": ratings.bots()}
    hub.deliver([], [Notification(player_id, "bot_offered", "", offer)])
