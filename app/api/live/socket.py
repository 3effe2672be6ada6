"""One accepted WebSocket served through ASGI: its bounded outbox and its writer."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, NamedTuple

from fastapi import WebSocket
from starlette.websockets import WebSocketDisconnect, WebSocketState

from app.api.edge.protocols import ALLOWANCE
from app.api.live import client_out
from app.api.live.audiences import CLOSE_REVOKED, REVOKED_REASON
from app.api.live.backpressure import (
    CLOSE_SLOW_CONSUMER,
    SLOW_REASON,
    Bounded,
)
from app.api.live.client_in import Mover, answer
from app.api.live.wire import CLOSED, SENT, WIRE, Wire, frame
from app.errors import ServiceError
from app.service.rate_limits import Allowance

log = logging.getLogger(__name__)

CLOSE_INTERNAL = 1011


class _Close(NamedTuple):
    """A close in a socket's outbox: the last thing written."""

    code: int
    reason: str


class Socket(Bounded[str | _Close]):
    """One accepted WebSocket: messages go out in order through a bounded outbox, written by a
    task that runs only while there is something to send (an idle socket holds no task and no
    queue); a client that does not keep up is closed with 4008; one whose token is revoked
    with 4401 (``end``)."""

    __slots__ = (
        "_allowance",
        "_room",
        "_wire",
        "_writer",
        "websocket",
    )

    def __init__(self, websocket: WebSocket, queue_limit: int = 256) -> None:
        self.websocket = websocket
        self.queue_limit = queue_limit
        # Messages waiting to be written; None when there are none. A ``_Close`` in it is the
        # socket's close. Past ``queue_limit`` only the table's feed adds (it never waits), up
        # to ``OVERFLOW`` more before the client counts as slow at once.
        self._box: deque[str | _Close] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._full_since: float | None = None  # when the outbox last reached its limit
        self._room: asyncio.Event | None = None  # for ``send`` waiting on a full outbox
        self.closing = False
        # The socket's count against ``rate_limit_socket``, shared with its protocol, which
        # counts the pings and pongs (``app.api.edge.protocols``); its own under another server.
        extensions = websocket.scope.get("extensions") or {}
        self._allowance: Allowance | None = (
            extensions[ALLOWANCE]
            if ALLOWANCE in extensions
            else Allowance.of(websocket.app.state.settings.rate_limit_socket)
        )
        self._wire: Wire | None = None  # the transport, for shared frames (``app.api.live.wire``)

    @property
    def wire(self) -> Wire | None:
        return self._wire

    def idle(self) -> bool:
        """Open, with nothing waiting to be written."""
        return not self.closing and self._box is None and self._writer is None

    async def accept(self) -> None:
        """Accept the socket; then find its wire, where the server allows one."""
        await self.websocket.accept()
        self._wire = self.websocket.scope.get("extensions", {}).get(WIRE)

    def _send_many_now(self, messages: list[str], framed: bytes) -> bool:
        """On a wire, ``framed`` written at once unless the transport is paused."""
        wire = self._wire
        if wire is None:
            return False
        done = wire.write(framed, len(messages))
        if done == SENT:
            return True
        if done == CLOSED:
            self._gone()
            return True
        return False

    def _send_now(self, message: str, framed: bytes | None) -> bool:
        """Send ``message`` at once when the transport takes it without waiting (nothing is
        queued, nothing being written): no task, no queue. False: queue it.

        With a wire (``app.api.live.wire``) the frame's bytes are written to the transport, unless
        it is paused. Else the ASGI send of a text message runs to its end without suspending
        unless the server's transport is paused (its write buffer above the high-water mark: a
        client that does not read); it then suspends before writing anything, and is closed
        here unsent. Either way a paused transport's message goes through the outbox and its
        writer task, whose ASGI send waits for the transport."""
        wire = self._wire
        if wire is not None:
            done = wire.write(frame(message) if framed is None else framed)
            if done == SENT:
                return True
            if done == CLOSED:
                self._gone()  # the client left, or the socket is closing
                return True
            return False
        step = self.websocket.send_text(message)
        try:
            step.send(None)
        except StopIteration:
            return True
        except (WebSocketDisconnect, OSError, RuntimeError):
            self._gone()  # the client left
            return True
        except Exception:
            log.exception("websocket send failed")
            self._gone()
            return True
        step.close()
        return False

    async def send_text(self, message: str) -> None:
        """Queue a reply to the client: with ``queue_limit`` waiting, wait for room first (a
        burst, such as a catch-up, drains; a client that does not read is closed meanwhile)."""
        while not self.closing and self._box is not None and len(self._box) >= self.queue_limit:
            if self._room is None:
                self._room = asyncio.Event()
            self._room.clear()
            await self._room.wait()
        self.offer(message)

    def _queued(self, message: str, framed: bytes | None) -> str | _Close:
        return message

    def _slow_close(self) -> str | _Close:
        return _Close(CLOSE_SLOW_CONSUMER, SLOW_REASON)

    def _drain(self) -> None:
        if self._writer is None:
            self._writer = asyncio.create_task(self._write())

    def _drain_closing(self) -> None:
        if self._room is not None:
            self._room.set()
        self._drain()

    def end(self, code: int, reason: str, last: str | None = None) -> None:
        """Close with ``code`` once what is being written is out: nothing else queued is sent
        but ``last``, and the client's messages are read but no longer answered."""
        if self.closing:
            return
        self.closing = True
        box = self._box
        if box is None:
            box = self._box = deque()
        box.clear()
        if last is not None:
            box.append(last)
        box.append(_Close(code, reason))
        if self._room is not None:
            self._room.set()
        if self._writer is None:
            self._writer = asyncio.create_task(self._write())

    def revoked(self) -> None:
        """The token this socket was opened with was revoked (``Tokens.hold``): 4401."""
        self.end(CLOSE_REVOKED, REVOKED_REASON, client_out.TOKEN_REVOKED)

    async def _write(self) -> None:
        box = self._box
        assert box is not None
        try:
            while box:
                message = box.popleft()
                if isinstance(message, _Close):
                    box.clear()
                    await self.websocket.close(message.code, message.reason)
                    return
                await self.websocket.send_text(message)
                if len(box) < self.queue_limit:
                    self._full_since = None
                    if self._room is not None:
                        self._room.set()
        except (WebSocketDisconnect, OSError, RuntimeError):
            self._gone()  # the client left (Starlette: RuntimeError once it is closed)
        except Exception:
            log.exception("websocket writer failed")
            self._gone()
            with contextlib.suppress(Exception):
                await self.websocket.close(CLOSE_INTERNAL)
        finally:
            self._writer = None
            if not box:
                self._box = None

    def _gone(self) -> None:
        self.closing = True
        if self._box is not None:
            self._box.clear()
        if self._room is not None:
            self._room.set()

    def stop(self) -> None:
        """The session ended: nothing more is written."""
        self._gone()
        if self._writer is not None:
            self._writer.cancel()

    async def refuse(self, code: int, exc: ServiceError) -> None:
        """Accept only to say why, then close with ``code``."""
        await self.websocket.accept()
        await self.websocket.send_text(client_out.error(exc))
        await self.websocket.close(code)

    async def serve(self, *loops: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``loops`` until any ends (the client left, or a loop failed); then close. One
        loop runs in the calling task (the ASGI session's own)."""
        failed: list[BaseException] = []
        if len(loops) == 1:
            try:
                await loops[0]()
            except Exception as error:
                failed.append(error)
        else:
            tasks = [asyncio.create_task(loop()) for loop in loops]
            try:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            failed = [e for t in done if not t.cancelled() and (e := t.exception())]
        gone = self.websocket.client_state != WebSocketState.CONNECTED
        for exc in failed:
            if not gone and not isinstance(exc, WebSocketDisconnect | OSError):
                log.error("websocket session failed", exc_info=exc)
                self.stop()
                with contextlib.suppress(Exception):
                    await self.websocket.close(CLOSE_INTERNAL)
        self.stop()

    async def receive(self, play: Mover) -> None:
        """Answer the client's messages (``client_in.answer``; ``play`` answers its moves) until
        it disconnects.

        Read only once the first message (the view) is queued, so it comes first."""
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if self.closing:
                continue  # closed by the server (``end``): only the client's close is awaited
            raw = message.get("text") or message.get("bytes") or b""
            await self.send_text(await answer(raw, self._allowance, play))
