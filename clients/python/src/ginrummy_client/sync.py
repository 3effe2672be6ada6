"""A thin synchronous layer over the async client, for scripts and notebooks: the same calls,
run on an event loop of its own in a background thread.

    with SyncClient("http://127.0.0.1:8000") as api:
        api.sign_up("Rob")
        table = api.create_table(rules={"target": 30})
        with api.table_socket(table["table_id"]) as socket:
            for message in socket:
                ...
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from types import TracebackType
from typing import Any, TypeVar

from ginrummy_client.rest import JSON, Client
from ginrummy_client.sockets import LobbySocket, PlayerSocket, Socket, TableSocket

T = TypeVar("T")


class _Loop:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


class SyncSocket:
    """A socket iterated synchronously; ``send``, ``move`` and ``close`` block."""

    def __init__(self, loop: _Loop, socket: Socket) -> None:
        self._loop = loop
        self.socket = socket

    def __enter__(self) -> SyncSocket:
        self._loop.run(self._start())
        return self

    async def _start(self) -> None:
        self.socket.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __iter__(self) -> Iterator[JSON]:
        while True:
            try:
                yield self._loop.run(self.socket.__anext__())
            except StopAsyncIteration:
                return

    def send(self, message: JSON) -> None:
        self._loop.run(self.socket.send(message))

    def move(self, action: JSON, expected_version: int | None = None) -> JSON:
        assert isinstance(self.socket, TableSocket), "moves go on a table's socket"
        return self._loop.run(self.socket.move(action, expected_version))

    def close(self) -> None:
        self._loop.run(self.socket.close())


class SyncClient:
    """Every ``Client`` call, blocking (``api.view(table_id)``, ``api.move(...)``, ...)."""

    def __init__(self, server: str, token: str | None = None, **kw: Any) -> None:
        self._loop = _Loop()
        self.client: Client = self._loop.run(self._make(server, token, kw))

    @staticmethod
    async def _make(server: str, token: str | None, kw: dict[str, Any]) -> Client:
        return Client(server, token, **kw)

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._loop.run(self.client.close())
        self._loop.stop()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        call = getattr(self.client, name)
        if not callable(call):
            return call  # type: ignore[no-any-return]

        def blocking(*args: Any, **kw: Any) -> Any:
            return self._loop.run(call(*args, **kw))

        return blocking

    def table_socket(self, table_id: str, since: int | None = None, **kw: Any) -> SyncSocket:
        return SyncSocket(self._loop, TableSocket(self.client, table_id, since, **kw))

    def player_socket(self, **kw: Any) -> SyncSocket:
        return SyncSocket(self._loop, PlayerSocket(self.client, **kw))

    def lobby_socket(self, **kw: Any) -> SyncSocket:
        return SyncSocket(self._loop, LobbySocket(self.client, **kw))
