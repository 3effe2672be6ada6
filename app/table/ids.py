"""Table ids: 32 hex digits in the UUID version 7 layout (RFC 9562, section 5.7), as
``uuid.uuid4().hex`` was, but led by the creation time in milliseconds.

Every index keyed by a table's id (its row, seats, snapshots, events, clock, finished matches)
then takes a new table's rows beside the newest instead of at a random page: the pages being
written stay few and in memory however large the history grows, where a random id touched a
page of the whole index (on the database of a million finished matches, 12 GB of events
index against 128 MB of shared buffers). The 74 random bits still make an id unguessable.
Python 3.14's ``uuid.uuid7`` makes the same layout.
"""

from __future__ import annotations

import secrets
import time

_VERSION = 0x7 << 76
_VARIANT = 0b10 << 62


def table_id(now_ns: int | None = None) -> str:
    """A new table id; ``now_ns`` (nanoseconds since the epoch) for tests."""
    ms = (time.time_ns() if now_ns is None else now_ns) // 1_000_000
    rand_a = secrets.randbits(12)
    rand_b = secrets.randbits(62)
    value = (ms & (1 << 48) - 1) << 80 | _VERSION | rand_a << 64 | _VARIANT | rand_b
    return f"{value:032x}"
