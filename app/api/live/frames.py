"""Each table message rendered once per audience in this process, then shared by its sockets.

A table's sockets fall into three audiences: seat 0, seat 1 and the spectators. Every socket of
an audience is owed the same bytes for an event (``event`` or ``skip``) and for a ``view`` of
the same table state, so each is redacted and serialised here once, and the one text frame is
queued to every socket of that audience. Redaction is exactly the per-recipient one
(``Event.for_recipient`` through ``client_out.event_message``, ``TableService.render``): the
cache only keys it by audience, never widens it. A socket that fills a gap from the log renders
through the same cache, so a live event and a logged one give the same frame.

Keys are (table, seq, seat) for events and (table, version, seq, seat) for views: a table's seq
numbers its events for good, so a key always names the same redacted text.
"""

from __future__ import annotations

from prometheus_client import Counter

from app.api.live import client_out
from app.service.lru import LRU
from app.service.pipeline import TableService
from app.table.commands import Actor, seat_of
from app.table.model import Loaded, StoredEvent

# Recent frames kept: a few events of every table with live sockets, for each audience.
EVENT_FRAMES = 8192
VIEW_FRAMES = 1024

RENDERED = Counter(
    "ginrummy_ws_frames_rendered_total",
    "Table messages redacted and serialised (once per audience; every socket shares them)",
    ["kind"],
)
RENDERED_EVENTS = RENDERED.labels("event")
RENDERED_VIEWS = RENDERED.labels("view")


class Frames:
    """The encoded ``event``/``skip`` and ``view`` messages of this process, per audience."""

    def __init__(self, events: int = EVENT_FRAMES, views: int = VIEW_FRAMES) -> None:
        self._events: LRU[tuple[str, int, int | None], str] = LRU(events)
        self._views: LRU[tuple[str, int, int, int | None], str] = LRU(views)

    def event(self, stored: StoredEvent, seat: int | None) -> str:
        """The frame of ``stored`` for ``seat`` (None: every spectator)."""
        key = (stored.table_id, stored.seq, seat)
        cached = self._events.get(key)
        if cached is None:
            RENDERED_EVENTS.inc()
            cached = client_out.text(client_out.event_message(stored, seat))
            self._events.put(key, cached)
        return cached

    def view(self, service: TableService, loaded: Loaded, actor: Actor | None) -> str:
        """The ``view`` message of ``loaded`` for ``actor`` (None, or not seated: a spectator)."""
        seat = seat_of(loaded, actor)
        table = loaded.table
        key = (table.id, table.version, table.last_seq, seat)
        cached = self._views.get(key)
        if cached is None:
            RENDERED_VIEWS.inc()
            # Every actor of one seat sees that seat's view; anyone else a spectator's.
            view = service.render(loaded, None if seat is None else actor)
            cached = client_out.view(view)
            self._views.put(key, cached)
        return cached
