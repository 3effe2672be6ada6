"""What decides the bot's moves: a Python function, or an external engine over stdin/stdout.

A Python engine is any ``choose(view) -> action`` (plain or async): ``view`` is the seat's view of
the table as ``GET /v1/tables/{id}`` answers it, plus ``events``, the seat's events of the
current hand; the action is ``{"kind": ..., "card"?: ...}``, one of ``view["game"]["legal"]``.

An external engine is a program in any language that speaks the line protocol (docs/sdk.md):
one JSON object per line each way, on its stdin and stdout (its stderr is the kit's).

    kit -> engine   {"type": "hello", "protocol": 1}
    engine -> kit   {"type": "ready", "name": "my engine"}
    kit -> engine   {"type": "turn", "id": "7", "table_id": "...", "view": {...}}
    engine -> kit   {"type": "action", "id": "7", "kind": "discard", "card": "QC"}
    kit -> engine   {"type": "quit"}

The kit asks one question at a time (the tables it plays wait their turn) and waits
``timeout`` seconds for each answer.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import itertools
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

JSON = dict[str, Any]
Choose = Callable[[JSON], JSON | Awaitable[JSON]]
PROTOCOL = 1


class EngineError(Exception):
    """The engine broke the protocol, exited, or took too long."""


class Engine(Protocol):
    name: str

    async def start(self) -> None: ...

    async def choose(self, table_id: str, view: JSON) -> JSON: ...

    async def stop(self) -> None: ...


class PythonEngine:
    """A Python function as the engine."""

    def __init__(self, choose: Choose, name: str = "") -> None:
        self._choose = choose
        self.name = name or getattr(choose, "__name__", "python")

    async def start(self) -> None:
        return None

    async def choose(self, table_id: str, view: JSON) -> JSON:
        answer = self._choose(view)
        if inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, dict) or "kind" not in answer:
            raise EngineError(f"choose() answered {answer!r}, not an action")
        return answer

    async def stop(self) -> None:
        return None


def load_function(spec: str) -> Choose:
    """``module:function`` (``mybot:choose``) imported."""
    module, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"{spec!r}: give module:function")
    found = getattr(importlib.import_module(module), name)
    if not callable(found):
        raise ValueError(f"{spec!r} is not a function")
    function: Choose = found
    return function


class ProcessEngine:
    """An engine program spoken to over its stdin and stdout."""

    def __init__(self, command: Sequence[str], timeout: float = 30.0) -> None:
        self.command = list(command)
        self.timeout = timeout
        self.name = self.command[0] if self.command else "engine"
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)

    async def start(self) -> None:
        self._process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=2**24,
        )
        await self._write({"type": "hello", "protocol": PROTOCOL})
        ready = await self._read("ready")
        self.name = str(ready.get("name") or self.name)

    async def _write(self, message: JSON) -> None:
        process = self._process
        assert process is not None and process.stdin is not None, "start() the engine first"
        process.stdin.write(json.dumps(message).encode() + b"\n")
        await process.stdin.drain()

    async def _read(self, kind: str, message_id: str | None = None) -> JSON:
        """The engine's next line of ``kind`` (for ``message_id``); lines of other types
        (``info``, ...) are skipped."""
        process = self._process
        assert process is not None and process.stdout is not None
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    line = await process.stdout.readline()
                    if not line:
                        raise EngineError(f"the engine exited ({await process.wait()})")
                    try:
                        message = json.loads(line)
                    except ValueError as exc:
                        raise EngineError(f"not a JSON line: {line[:200]!r}") from exc
                    if not isinstance(message, dict):
                        raise EngineError(f"not an object: {line[:200]!r}")
                    if message.get("type") == kind and message.get("id") == message_id:
                        return message
        except TimeoutError as exc:
            raise EngineError(f"no {kind} within {self.timeout} s") from exc

    async def choose(self, table_id: str, view: JSON) -> JSON:
        async with self._lock:
            turn = str(next(self._ids))
            await self._write({"type": "turn", "id": turn, "table_id": table_id, "view": view})
            answer = await self._read("action", turn)
        return {k: v for k, v in answer.items() if k in ("kind", "card") and v is not None}

    async def stop(self) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        try:
            await self._write({"type": "quit"})
            async with asyncio.timeout(5):
                await process.wait()
        except (TimeoutError, OSError):
            process.kill()
            await process.wait()


def serve(choose: Callable[[JSON], JSON], name: str) -> None:
    """Speak the line protocol on stdin and stdout with ``choose``: a Python engine run as an
    external one (``python -m yourengine``)."""
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            answer: JSON = {"type": "ready", "name": name}
        elif kind == "turn":
            answer = {"type": "action", "id": message["id"], **choose(message["view"])}
        elif kind == "quit":
            return
        else:
            continue
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
