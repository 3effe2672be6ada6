"""The little of RFC 6455 the benchmarks' minimal socket clients speak (``audience.py --light``,
``player_sockets.py``): a server's unmasked frames taken off a read buffer, and the masked pong
that answers a ping."""

from __future__ import annotations

import os


def take_frame(buffer: bytearray) -> tuple[int, bytes, int] | None:
    """The frame at the start of ``buffer``, removed from it: its opcode, its payload and its
    size on the wire; None while it has not all arrived."""
    if len(buffer) < 2:
        return None
    opcode, size, at = buffer[0] & 0x0F, buffer[1] & 0x7F, 2
    if size == 126:
        if len(buffer) < 4:
            return None
        size, at = int.from_bytes(buffer[2:4], "big"), 4
    elif size == 127:
        if len(buffer) < 10:
            return None
        size, at = int.from_bytes(buffer[2:10], "big"), 10
    if len(buffer) < at + size:
        return None
    payload = bytes(buffer[at : at + size])
    del buffer[: at + size]
    return opcode, payload, at + size


def pong(payload: bytes) -> bytes:
    """The client's (masked) pong to a ping of ``payload`` (at most 125 bytes)."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes((0x8A, 0x80 | len(payload))) + mask + masked
