"""The server's REST API, async: one call per endpoint a player or a bot uses, retried on 429
and 503 after the ``Retry-After`` the server sends (docs/protocol.md, /openapi.json).

    async with Client("http://127.0.0.1:8000") as api:
        me = await api.sign_up("Rob")          # keeps the token for the calls after it
        table = await api.create_table(rules={"target": 30})
        await api.seat_bot(table["table_id"], "easy")
        await api.start(table["table_id"])
"""

from __future__ import annotations

import asyncio
import random
from types import TracebackType
from typing import Any

import httpx

JSON = dict[str, Any]

# Engine action kinds to (endpoint under /v1/tables/{id}/, body).
_PLAIN = {
    "take_upcard": "moves/take-upcard",
    "pass": "moves/pass",
    "big_gin": "moves/big-gin",
    "next_hand": "next-hand",
    "resign": "resign",
}


class ApiError(Exception):
    """A refusal: the HTTP status, the server's stable ``code`` and its message."""

    def __init__(self, status: int, code: str, message: str, retry_after: float | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


def endpoint(action: JSON) -> tuple[str, JSON]:
    """The move endpoint (relative to the table) and body for an action
    (``{"kind": "discard", "card": "QC"}``, as a socket ``move`` takes it)."""
    kind = action["kind"]
    if kind in ("draw_stock", "draw_discard"):
        return "moves/draw", {"source": kind.removeprefix("draw_")}
    if kind in ("discard", "knock"):
        return f"moves/{kind}", {"card": action["card"]}
    return _PLAIN[kind], {}


def retry_after(response: httpx.Response) -> float | None:
    """The seconds a 429 or 503 asks to wait (``Retry-After``, in seconds), if it says."""
    value = response.headers.get("retry-after")
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None


class Client:
    """The REST API as one player (``token``), over one connection pool.

    A 429 or 503 is retried up to ``retries`` times, after its ``Retry-After`` (else an
    exponential backoff from ``backoff`` seconds, with jitter); any other refusal raises
    ``ApiError`` at once."""

    def __init__(
        self,
        server: str,
        token: str | None = None,
        *,
        retries: int = 5,
        backoff: float = 0.5,
        timeout: float = 30.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.server = server.rstrip("/")
        self.token = token
        self.retries = retries
        self.backoff = backoff
        self.http = http or httpx.AsyncClient(base_url=self.server, timeout=timeout)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self.http.aclose()

    @property
    def ws_base(self) -> str:
        """The server's URL with a WebSocket scheme."""
        return "ws" + self.server.removeprefix("http")

    async def request(self, method: str, path: str, body: JSON | None = None, **kw: Any) -> Any:
        """One call, its JSON answer (None for an empty one); retried on 429 and 503."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        headers.update(kw.pop("headers", {}))
        for attempt in range(self.retries + 1):
            r = await self.http.request(method, path, json=body, headers=headers, **kw)
            if r.status_code in (429, 503) and attempt < self.retries:
                wait = retry_after(r)
                if wait is None:
                    wait = self.backoff * 2**attempt
                await asyncio.sleep(wait + random.uniform(0, self.backoff))
                continue
            if r.is_error:
                try:
                    err = r.json()
                    code, message = str(err["code"]), str(err["message"])
                except (ValueError, KeyError, TypeError):
                    code, message = "http_error", r.text
                raise ApiError(r.status_code, code, message, retry_after(r))
            return r.json() if r.content else None
        raise AssertionError("unreachable")

    # Players.

    async def sign_up(self, name: str, *, bot: bool = False) -> JSON:
        """A new player (``POST /v1/players``), with ``bot`` a bot account (marked for good: the
        lobby shows it as a bot); its token is this client's from now on."""
        body: JSON = {"name": name, "bot": True} if bot else {"name": name}
        player: JSON = await self.request("POST", "/v1/players", body)
        self.token = player["token"]
        return player

    async def me(self) -> JSON:
        result: JSON = await self.request("GET", "/v1/players/me")
        return result

    async def ticket(self) -> str:
        """A single-use ticket for one socket (``POST /v1/ws-tickets``)."""
        return str((await self.request("POST", "/v1/ws-tickets"))["ticket"])

    # Tables.

    async def create_table(
        self, preset: str = "standard", rules: JSON | None = None, **more: Any
    ) -> JSON:
        """A new table with you at seat 0: its view, with ``invite_code``."""
        body = {"preset": preset, "rules": rules or {}, **more}
        result: JSON = await self.request("POST", "/v1/tables", body)
        return result

    async def invite(self, code: str) -> JSON:
        """What an invite offers (``GET /v1/invites/{code}``)."""
        result: JSON = await self.request("GET", f"/v1/invites/{code}")
        return result

    async def accept(self, code: str, table_id: str | None = None) -> JSON:
        """Take seat 1 of the invite's table: the command's result (``table`` is your view)."""
        body = {} if table_id is None else {"table_id": table_id}
        result: JSON = await self.request("POST", f"/v1/invites/{code}", body)
        return result

    async def seat_bot(self, table_id: str, level: str) -> JSON:
        result: JSON = await self.request("POST", f"/v1/tables/{table_id}/bot", {"level": level})
        return result

    async def view(self, table_id: str) -> JSON:
        """Your view of the table (a spectator's without a token)."""
        result: JSON = await self.request("GET", f"/v1/tables/{table_id}")
        return result

    async def events(self, table_id: str, since: int = 0, limit: int | None = None) -> list[JSON]:
        """The events after ``since``, redacted for you, with contiguous seqs."""
        params: JSON = {"since": since} | ({} if limit is None else {"limit": limit})
        result: list[JSON] = await self.request(
            "GET", f"/v1/tables/{table_id}/events", params=params
        )
        return result

    async def command(self, table_id: str, path: str, body: JSON | None = None) -> JSON:
        """``POST /v1/tables/{id}/{path}``: start, rematch, next-hand, resign, a move, ..."""
        result: JSON = await self.request("POST", f"/v1/tables/{table_id}/{path}", body or {})
        return result

    async def start(self, table_id: str) -> JSON:
        return await self.command(table_id, "start")

    async def rematch(self, table_id: str) -> JSON:
        """Ask for a rematch (or agree to the one the other seat asked for)."""
        return await self.command(table_id, "rematch")

    async def accept_rematch(self, table_id: str) -> JSON:
        return await self.command(table_id, "rematch/accept")

    async def decline_rematch(self, table_id: str) -> JSON:
        return await self.command(table_id, "rematch/decline")

    async def chat(self, table_id: str, text: str) -> JSON:
        return await self.command(table_id, "chat", {"text": text})

    async def move(self, table_id: str, action: JSON, expected_version: int | None = None) -> JSON:
        """An engine action (``{"kind", "card"?}``) through its endpoint; 409 ``stale_version``
        when ``expected_version`` is given and the table moved on."""
        path, body = endpoint(action)
        if expected_version is not None:
            body["expected_version"] = expected_version
        return await self.command(table_id, path, body)

    async def set_available(self, available: bool = True) -> JSON:
        """A bot account: available for the bot ladder (say it again every ``renew_every``
        seconds), or not; the answer names the ladder table it plays at now (``table_id``)."""
        result: JSON = await self.request("PUT", "/v1/bots/me/available", {"available": available})
        return result

    async def ladder(self) -> JSON:
        """The bot ladder's standings."""
        result: JSON = await self.request("GET", "/v1/bots/ladder")
        return result

    async def set_webhook(self, url: str) -> JSON:
        """Register your webhook: the answer carries its signing secret, once."""
        result: JSON = await self.request("PUT", "/v1/players/me/webhook", {"url": url})
        return result

    # The lobby (docs/lobby.md): seeks and challenges, each answered as a seek row.

    async def post_seek(
        self, preset: str = "standard", rules: JSON | None = None, **more: Any
    ) -> JSON:
        """Seek a game (``POST /v1/seeks``: the fields of a table, ``rating_min``, ...)."""
        body = {"preset": preset, "rules": rules or {}, **more}
        result: JSON = await self.request("POST", "/v1/seeks", body)
        return result

    async def seek(self, seek_id: str) -> JSON:
        """A seek or challenge: ``open``, ``paired`` (``table_id``), or closed with ``reason``."""
        result: JSON = await self.request("GET", f"/v1/seeks/{seek_id}")
        return result

    async def seeks(self) -> list[JSON]:
        """The lobby: every open seek, oldest first."""
        result: list[JSON] = await self.request("GET", "/v1/seeks")
        return result

    async def my_seeks(self) -> list[JSON]:
        """Your open seeks and challenges, and the open challenges to you."""
        result: list[JSON] = await self.request("GET", "/v1/players/me/seeks")
        return result

    async def cancel_seek(self, seek_id: str) -> JSON:
        result: JSON = await self.request("DELETE", f"/v1/seeks/{seek_id}")
        return result

    async def accept_seek(self, seek_id: str) -> JSON:
        """Take a listed seek: your row of the pairing, with the started ``table_id``."""
        result: JSON = await self.request("POST", f"/v1/seeks/{seek_id}/accept")
        return result

    async def challenge(
        self, to: str | None, preset: str = "standard", rules: JSON | None = None, **more: Any
    ) -> JSON:
        """Challenge a player by id or name (``to``; None: an open challenge with a ``url``)."""
        body = {"preset": preset, "rules": rules or {}, **more}
        if to is not None:
            body["to"] = to
        result: JSON = await self.request("POST", "/v1/challenges", body)
        return result

    async def get_challenge(self, challenge_id: str) -> JSON:
        result: JSON = await self.request("GET", f"/v1/challenges/{challenge_id}")
        return result

    async def accept_challenge(self, challenge_id: str) -> JSON:
        """Take a challenge: your row of the pairing, with the started ``table_id``."""
        result: JSON = await self.request("POST", f"/v1/challenges/{challenge_id}/accept")
        return result

    async def decline_challenge(self, challenge_id: str, reason: str = "generic") -> JSON:
        """Decline with a reason: ``generic``, ``later``, ``too_fast``, ``too_slow``, ``rated``,
        ``casual`` or ``rules``."""
        result: JSON = await self.request(
            "POST", f"/v1/challenges/{challenge_id}/decline", {"reason": reason}
        )
        return result

    async def cancel_challenge(self, challenge_id: str) -> JSON:
        result: JSON = await self.request("DELETE", f"/v1/challenges/{challenge_id}")
        return result
