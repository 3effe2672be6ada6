"""Waiting in tests for something observable: poll a check until it holds, or fail saying what
never did. ``wait_for`` blocks (for threads, processes and plain code); ``until`` awaits, and
takes a check that is a coroutine function or a plain callable.

The limits are generous (the machine running the suite is loaded); a check that holds returns
within one poll interval, so a fast machine waits no longer than it must.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

TIMEOUT = 30.0
EVERY = 0.05


def wait_for(
    check: Callable[[], Any], timeout: float = TIMEOUT, what: str = "", every: float = EVERY
) -> Any:
    """Call ``check`` every ``every`` s until it returns something truthy: that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what or check}"
        time.sleep(every)


async def until(
    check: Callable[[], Any], timeout: float = TIMEOUT, what: str = "", every: float = EVERY
) -> Any:
    """Call (and await, if it gives an awaitable) ``check`` every ``every`` s until it gives
    something truthy: that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what or check}"
        await asyncio.sleep(every)
