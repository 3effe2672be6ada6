"""The sockets (/asyncapi.json), with their reconnects: ``TableSocket`` (a table's stream, for a
seat or a spectator), ``PlayerSocket`` (a player's notifications from all their tables) and
``LobbySocket`` (the lobby's seeks, and with a token the player's notifications too).

    async with TableSocket(api, table_id) as table:
        async for message in table:          # view, event, skip, your_turn, heartbeat, ...
            ...
            ack = await table.move({"kind": "draw_stock"})

Each connection opens with a fresh ticket (``POST /v1/ws-tickets``) when the client has a
token. When it drops (the server restarts, a proxy cuts it, 4008 for a slow reader, 1011) the
socket reconnects after a backoff with jitter (longer after 4429, and growing while the server
refuses connections, so that many clients do not come back at once) and the table socket
resumes with ``since`` its last seq: the events come once each, in order, none lost; a
resume the server cannot serve brings a fresh ``view``. A refused handshake (4400, 4401, 4403,
4404) raises ``RefusedError`` from the iteration. The server's ``heartbeat`` needs no answer; a
socket that hears nothing for ``idle`` seconds (several heartbeats) reconnects, and the
WebSocket keepalive (ping and pong frames) is answered by the websockets library.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
from types import TracebackType
from typing import Any, Final

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from ginrummy_client.rest import JSON, ApiError, Client

# Close codes after which reconnecting cannot help (docs/protocol.md).
REFUSED: Final = frozenset({4400, 4401, 4403, 4404, 1008})
TOO_MANY: Final = 4429
_END: Final = object()


class RefusedError(Exception):
    """The server refused the socket: its close code and the ``error`` that said why."""

    def __init__(self, close_code: int, error: JSON | None) -> None:
        code = None if error is None else error.get("code")
        super().__init__(f"socket refused ({close_code}): {code}")
        self.close_code = close_code
        self.code: str | None = code
        self.message: str | None = None if error is None else error.get("message")


class LostError(Exception):
    """The socket dropped before the answer to a message came: it may or may not have been
    applied (the next view or events tell)."""


class Backoff:
    """Waits between reconnects: full jitter over an exponential ceiling from ``base`` to
    ``cap`` seconds; after a 4429, at least ``crowded`` seconds."""

    def __init__(self, base: float = 0.1, cap: float = 10.0, crowded: float = 2.0) -> None:
        self.base, self.cap, self.crowded = base, cap, crowded
        self.attempt = 0

    def reset(self) -> None:
        self.attempt = 0

    def next(self, close_code: int | None) -> float:
        ceiling = min(self.cap, self.base * 2**self.attempt)
        self.attempt += 1
        wait = random.uniform(ceiling / 2, ceiling)
        return max(wait, self.crowded * random.uniform(1, 2)) if close_code == TOO_MANY else wait


class Socket:
    """One of the server's sockets, kept open: messages are read by a task into a queue and
    iterated; ``send`` writes to the current connection."""

    def __init__(
        self,
        client: Client,
        *,
        authenticate: bool = True,
        idle: float | None = 60.0,
        backoff: Backoff | None = None,
    ) -> None:
        self.client = client
        self.authenticate = authenticate and client.token is not None
        self.idle = idle
        self.backoff = backoff or Backoff()
        self.connects = 0  # connections opened so far
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._ws: ClientConnection | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._pending: dict[str, asyncio.Future[JSON]] = {}
        self._ids = itertools.count(1)
        self._open = asyncio.Event()

    def path(self) -> str:
        raise NotImplementedError

    def keep(self, message: JSON) -> bool:
        """Whether to hand ``message`` to the reader (False: a repeat to drop)."""
        return True

    async def __aenter__(self) -> Socket:
        self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    def __aiter__(self) -> Socket:
        self.start()
        return self

    async def __anext__(self) -> JSON:
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            raise item
        message: JSON = item
        return message

    async def close(self) -> None:
        """Close for good: the iteration ends."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._queue.put_nowait(_END)

    async def drop(self) -> None:
        """Cut the current connection (as a network would): the socket reconnects."""
        if self._ws is not None:
            self._ws.transport.abort()

    async def send(self, message: JSON) -> None:
        """Send on the current connection, waiting for one while reconnecting."""
        await self._open.wait()
        assert self._ws is not None
        await self._ws.send(json.dumps(message))

    async def request(self, message: JSON, timeout: float = 30.0) -> JSON:
        """Send ``message`` with a fresh ``id``; its answer (``ack``, ``pong``). An ``error``
        answering it raises ``ApiError`` (status 0), a drop meanwhile ``LostError``."""
        message_id = f"c{next(self._ids)}"
        future: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        try:
            await self.send({**message, "id": message_id})
            async with asyncio.timeout(timeout):
                answer = await future
        finally:
            self._pending.pop(message_id, None)
        if answer["type"] == "error":
            raise ApiError(0, answer["code"], answer["message"])
        return answer

    async def ping(self) -> JSON:
        return await self.request({"type": "ping"})

    async def _url(self) -> str:
        path = self.path()
        if self.authenticate:
            ticket = await self.client.ticket()
            path += ("&" if "?" in path else "?") + f"ticket={ticket}"
        return self.client.ws_base + path

    async def _run(self) -> None:
        try:
            while not self._closed:
                code, error = await self._connection()
                if self._closed:
                    return
                if code in REFUSED:
                    self._queue.put_nowait(RefusedError(code, error))
                    return
                await asyncio.sleep(self.backoff.next(code))
        except Exception as exc:  # a bug or a refusal over HTTP: told to the reader
            self._queue.put_nowait(exc)

    async def _connection(self) -> tuple[int | None, JSON | None]:
        """One connection, read to its end: its close code (None: never opened) and the last
        ``error`` it received."""
        error: JSON | None = None
        try:
            url = await self._url()
            async with connect(url, proxy=None, open_timeout=10, max_size=None) as ws:
                self._ws = ws
                self.connects += 1
                self._open.set()
                try:
                    while True:
                        async with asyncio.timeout(self.idle):
                            raw = await ws.recv()
                        message = json.loads(raw)
                        self.backoff.reset()
                        if message["type"] == "error":
                            error = message
                        if self._answer(message) and self.keep(message):
                            self._queue.put_nowait(message)
                except TimeoutError:
                    return None, error  # silent too long: reconnect
                except ConnectionClosed:
                    pass
                return ws.close_code, error
        except ConnectionClosed as exc:
            return (exc.rcvd.code if exc.rcvd else 1006), error
        except (OSError, InvalidHandshake, TimeoutError, httpx.TransportError):
            return None, error
        except ApiError as exc:
            if exc.status in (401, 403):
                return 4401, {"code": exc.code, "message": exc.message}
            return None, error
        finally:
            self._ws = None
            self._open.clear()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(LostError("the socket dropped"))

    def _answer(self, message: JSON) -> bool:
        """Resolve the ``request`` this message answers; whether the reader gets it too."""
        future = self._pending.get(str(message.get("id")))
        if future is not None and message["type"] in ("ack", "error", "pong"):
            if not future.done():
                future.set_result(message)
            return bool(message["type"] != "pong")
        return True


class TableSocket(Socket):
    """A table's stream (``/v1/tables/{id}/ws``): a seat's with a token, else a spectator's.
    ``last_seq`` is the newest seq received; reconnects resume after it."""

    SEQUENCED: Final = ("view", "event", "skip")

    def __init__(self, client: Client, table_id: str, since: int | None = None, **kw: Any) -> None:
        super().__init__(client, **kw)
        self.table_id = table_id
        self.last_seq = since

    def path(self) -> str:
        since = "" if self.last_seq is None else f"?since={self.last_seq}"
        return f"/v1/tables/{self.table_id}/ws{since}"

    def keep(self, message: JSON) -> bool:
        kind = message["type"]
        if kind == "view":
            self.last_seq = message["seq"]
        elif kind in ("event", "skip"):
            seq = message["seq"]
            if self.last_seq is not None and seq <= self.last_seq:
                return False  # already received before a reconnect
            self.last_seq = seq
        return True

    async def move(self, action: JSON, expected_version: int | None = None) -> JSON:
        """Play ``{"kind", "card"?}`` over the socket: the ``ack`` (``ApiError`` if refused)."""
        move: JSON = {"type": "move", "kind": action["kind"], "card": action.get("card")}
        if expected_version is not None:
            move["expected_version"] = expected_version
        return await self.request(move)


class PlayerSocket(Socket):
    """The player's notifications (``/v1/players/me/ws``): ``your_turn``, ``opponent_joined``,
    ``match_finished`` from all their tables; needs the client's token."""

    def path(self) -> str:
        return "/v1/players/me/ws"


class LobbySocket(Socket):
    """The lobby's news (``/v1/lobby/ws``): ``seek_added`` and ``seek_removed`` for anyone; with
    the client's token also the player's own notifications (``seek_paired``, ``seek_closed``,
    ``challenge_received``, ...), and it keeps the player's live seeks alive."""

    def path(self) -> str:
        return "/v1/lobby/ws"
