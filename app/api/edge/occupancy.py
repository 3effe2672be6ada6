"""The sockets open in this process per client address and per player, and a cap on each.

A socket is counted from its handshake (``app.api.live.routes``: once its caller is known) to
its session's end (``app.api.edge.access.WebSocketSession.finish``, for a parked socket too). One
client opened 3,000 spectator sockets in 5 s, and 2,000 with one token, each holding a file
descriptor and its memory until the keepalive noticed nothing: past either cap one more is
refused (``too_many_sockets``, close code 4429).

Counted in this process's memory, not shared through Redis: a count that goes up at a
handshake and down at a close is only right while every process that holds a share is alive,
and a process that dies would leave its sockets counted for good unless each count carried a
lease kept alive meanwhile. A cap per process bounds what one process holds, which is what runs
out (descriptors, memory); behind the proxy, its per-address ``limit_conn`` bounds the whole.
"""

from __future__ import annotations

from collections import Counter

from app.errors import RateLimitedError
from app.metrics import RATE_LIMITED

# A refused socket may try again after this many seconds (its ``Retry-After``): by then another
# of the same client may have closed.
RETRY_AFTER = 5.0


class Occupancy:
    """Open sockets by address and by player; ``0`` for a cap: none."""

    def __init__(self, per_player: int, per_address: int) -> None:
        self.per_player = per_player
        self.per_address = per_address
        self.players: Counter[str] = Counter()
        self.addresses: Counter[str] = Counter()

    def admit(self, address: str | None, player_id: str | None) -> Lease:
        """Count one more socket from ``address`` for ``player_id`` (either may be None: not
        counted); ``RateLimitedError`` (``too_many_sockets``) when it would pass a cap."""
        if address is not None and 0 < self.per_address <= self.addresses[address]:
            RATE_LIMITED.labels("ws_address").inc()
            raise RateLimitedError(
                "too_many_sockets",
                f"at most {self.per_address} open sockets from one address",
                RETRY_AFTER,
            )
        if player_id is not None and 0 < self.per_player <= self.players[player_id]:
            RATE_LIMITED.labels("ws_player").inc()
            raise RateLimitedError(
                "too_many_sockets",
                f"at most {self.per_player} open sockets for one player",
                RETRY_AFTER,
            )
        if address is not None:
            self.addresses[address] += 1
        if player_id is not None:
            self.players[player_id] += 1
        return Lease(self, address, player_id)


class Lease:
    """One counted socket; ``release`` at its close (once)."""

    __slots__ = ("address", "occupancy", "player_id")

    def __init__(self, occupancy: Occupancy, address: str | None, player_id: str | None) -> None:
        self.occupancy: Occupancy | None = occupancy
        self.address = address
        self.player_id = player_id

    def release(self) -> None:
        occupancy, self.occupancy = self.occupancy, None
        if occupancy is None:
            return
        counted = ((occupancy.addresses, self.address), (occupancy.players, self.player_id))
        for counts, key in counted:
            if key is not None:
                counts[key] -= 1
                if counts[key] <= 0:
                    del counts[key]
