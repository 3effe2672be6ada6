"""A player's socket (``/v1/players/me/ws``) parked: a lobby full of people waiting costs a few
KB a socket and no task.

Served through ASGI, each player socket holds the whole suspended ASGI call (~33 KB, see
``app.api.live.parking``), three tasks (its writer loop, its reader, the call's own), a queue of
its notifications, and a timeout of its own for its heartbeat. Once accepted it is idle by
construction (it sends nothing until a notification comes), so where the server allows it
(``ws_park_players``) it is parked at once: ``Wire.detach`` hands its transport to a ``Parked``
whose tenant is the player's ``Waiting``, and the ASGI call returns. Then:

- its notifications are handed to the ``Parked`` as each is published (``Hub.listen``), in
  order, through its bounded outbox (4008 for a client that does not read, as for any socket);
  being listened for, the player counts as present for the lobby's seeks (``Hub.present``);
- its ``heartbeat`` comes from one timer for all parked player sockets (``Heartbeats``),
  which touches only the sockets whose heartbeat is due, where each socket served through
  ASGI waits on a timeout of its own;
- its client's messages are answered as through ASGI (``pong``; a move gets ``not_a_table``);
- its token's revocation closes it with 4401, its keepalive, the server's shutdown (1012), its
  access log line and metrics are the ``Parked``'s, as for a spectator.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

from app.api.edge.access import SESSION
from app.api.live import client_out
from app.api.live.audiences import CLOSE_REVOKED, REVOKED_REASON
from app.api.live.client_in import answer, not_a_table
from app.api.live.parking import CHUNK, Parked
from app.api.live.session import parking_of
from app.api.live.socket import Socket
from app.api.live.wire import frame
from app.bus.hub import Hub, Notification
from app.service.rate_limits import Allowance
from app.service.tokens import Tokens

# How often the heartbeat timer looks for the sockets whose heartbeat is due (seconds): a
# heartbeat comes at most this much after ``ws_heartbeat`` s of silence.
AWAKE: Final = 1.0


class Heartbeats:
    """The heartbeats of this process's parked player sockets: one timer for all."""

    def __init__(self, heartbeat: float) -> None:
        self.heartbeat = heartbeat  # ``ws_heartbeat``; 0: none
        # The sockets by when they were last sent a notification or a heartbeat, oldest first
        # (a dict keeps its order of insertion: ``heard`` moves a socket to the end).
        self.quiet: dict[Parked, float] = {}
        self._task: asyncio.Task[None] | None = None
        beat = client_out.heartbeat(None)
        self._beat = (beat, frame(beat))

    def heard(self, parked: Parked) -> None:
        """``parked`` was just sent a notification: its heartbeat is ``heartbeat`` s away."""
        if not self.heartbeat or parked.closing:
            return
        self.quiet.pop(parked, None)
        self.quiet[parked] = time.monotonic()
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    def forget(self, parked: Parked) -> None:
        self.quiet.pop(parked, None)

    async def _run(self) -> None:
        """A heartbeat to each socket ``heartbeat`` s after its last message, looking every
        ``AWAKE`` s at the oldest: no work for a socket whose heartbeat is not due."""
        quiet, heartbeat = self.quiet, self.heartbeat
        try:
            while quiet:
                oldest = next(iter(quiet.values()))
                await asyncio.sleep(max(AWAKE, oldest + heartbeat - time.monotonic()))
                now = time.monotonic()
                due: list[Parked] = []
                for parked, last in quiet.items():
                    if last > now - heartbeat:
                        break
                    due.append(parked)
                for count, parked in enumerate(due, 1):
                    if quiet.get(parked, now) > now - heartbeat:
                        continue  # closed, or sent a notification, since
                    del quiet[parked]
                    quiet[parked] = now
                    parked.offer(*self._beat)
                    if not count % CHUNK:
                        await asyncio.sleep(0)
        finally:
            self._task = None

    def close(self) -> None:
        """The app stops: no more heartbeats."""
        if self._task is not None:
            self._task.cancel()
            self._task = None


def heartbeats_of(app: Any) -> Heartbeats:
    """This process's heartbeats of parked player sockets, made on first use."""
    heartbeats: Heartbeats | None = getattr(app.state, "heartbeats", None)
    if heartbeats is None:
        heartbeats = app.state.heartbeats = Heartbeats(app.state.settings.ws_heartbeat)
    return heartbeats


class Waiting:
    """A parked player socket's tenant: the player's notifications, held by its token."""

    __slots__ = ("digest", "heartbeats", "hub", "parked", "player_id", "tokens")

    def __init__(
        self, hub: Hub, tokens: Tokens, heartbeats: Heartbeats, player_id: str, digest: str
    ) -> None:
        self.hub = hub
        self.tokens = tokens
        self.heartbeats = heartbeats
        self.player_id = player_id
        self.digest = digest  # the hash of the token the socket was opened with
        self.parked: Parked | None = None

    def put(self, note: Notification) -> None:
        """A notification for the player (``Hub.listen``): sent now, in order."""
        parked = self.parked
        if parked is not None:
            parked.offer(client_out.note(note))
            self.heartbeats.heard(parked)

    def revoked(self) -> None:
        """The socket's token was revoked (``Tokens.hold``): 4401."""
        if self.parked is not None:
            self.parked.end(CLOSE_REVOKED, REVOKED_REASON, client_out.TOKEN_REVOKED)

    async def answer(self, allowance: Allowance | None, raw: str | bytes) -> str:
        return await answer(raw, allowance, not_a_table)

    def leave(self) -> None:
        self.hub.unlisten(self.player_id, self)
        self.tokens.release(self.digest, self)
        if self.parked is not None:
            self.heartbeats.forget(self.parked)


def park(socket: Socket, hub: Hub, tokens: Tokens, player_id: str, digest: str) -> bool:
    """Serve this accepted player socket below ASGI from now on, where the server allows it and
    the socket is idle; False: it stays as it is (nothing changed)."""
    websocket = socket.websocket
    wire = socket.wire
    if not websocket.app.state.settings.ws_park_players or wire is None or not socket.idle():
        return False
    session = websocket.scope.get("extensions", {}).get(SESSION)
    if session is None:
        return False
    parking = parking_of(websocket.app)
    heartbeats = heartbeats_of(websocket.app)
    waiting = Waiting(hub, tokens, heartbeats, player_id, digest)
    parked = wire.detach(lambda detached: parking.park(detached, waiting, session))
    if parked is None:
        return False
    # No await from the detach to here: nothing published meanwhile is missed.
    waiting.parked = parked
    hub.listen(player_id, waiting)
    tokens.hold(digest, waiting)  # a revocation closes the socket (4401), at once if it was
    heartbeats.heard(parked)
    session.detach(websocket.scope)
    socket.stop()
    return True
