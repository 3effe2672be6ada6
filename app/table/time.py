"""The server's time: always aware, in UTC (the pure table code takes it as an argument)."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
