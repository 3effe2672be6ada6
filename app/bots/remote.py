"""A bot that plays over the public API, as any client would: HTTP moves, a WebSocket to listen.

    python -m app.bots.remote --server http://127.0.0.1:8000 --level hard --name Rob \\
        [--invite CODE | --create [--preset standard] [--rule target=30] [--vs easy]] \\
        [--matches 1] [--delay 0] [--webhook HOST:PORT [--webhook-url URL] [--poll 10]]

It creates a player (``POST /v1/players``), then joins a table by invite or creates one (and with
``--vs LEVEL`` seats a server bot against itself, then starts). It opens the table's WebSocket
(``/v1/tables/{id}/ws?token=...``) and keeps the current hand's events it receives. Whenever a
message may mean it has something to do (``view``, ``your_turn``, an opponent joining, a hand
or match starting or ending) it fetches its view
(``GET /v1/tables/{id}``), and while that view has a move asks ``get_bot(level).choose(game,
events)`` and posts it to the move's endpoint with ``expected_version``; a 409 means the table
moved on, and the next message brings it back. It deals the next hand when one is over, starts
a rematch until it has played ``--matches`` matches, then prints a JSON summary and exits.

With ``--webhook`` it opens no socket: it registers a webhook and wakes when the server POSTs
``your_turn`` (``app.bots.remote_webhooks``).

Only ``httpx``, ``websockets`` and the documented endpoints: the same a frontend uses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any

import httpx
from websockets.asyncio.client import connect

from app.bots import LEVELS, NoMoveError, get_bot, remote_webhooks

JSON = dict[str, Any]

# Besides ``your_turn``: the events after which this seat may have something to do.
STEP_EVENTS = frozenset({"player_joined", "bot_seated", "match_started", "hand_over", "match_over"})

# Engine action kinds to (endpoint under /v1/tables/{id}/, body).
_PLAIN = {
    "take_upcard": "moves/take-upcard",
    "pass": "moves/pass",
    "big_gin": "moves/big-gin",
    "next_hand": "next-hand",
}


def endpoint(action: JSON) -> tuple[str, JSON]:
    """The move endpoint (relative to the table) and body for a bot's action."""
    kind = action["kind"]
    if kind in ("draw_stock", "draw_discard"):
        return "moves/draw", {"source": kind.removeprefix("draw_")}
    if kind in ("discard", "knock"):
        return f"moves/{kind}", {"card": action["card"]}
    return _PLAIN[kind], {}


class RemoteBot:
    """One seat played over HTTP and WebSocket by a bot of ``level``."""

    def __init__(self, http: httpx.AsyncClient, level: str, matches: int, delay: float) -> None:
        self.http = http
        self.bot = get_bot(level)
        self.matches = matches
        self.delay = delay
        self.token = ""
        self.table_id = ""
        self.events: list[JSON] = []
        self.results: list[JSON] = []

    async def call(self, method: str, path: str, body: JSON | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return await self.http.request(method, path, json=body, headers=headers)

    async def ok(self, method: str, path: str, body: JSON | None = None) -> Any:
        r = await self.call(method, path, body)
        if r.is_error:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text}")
        return r.json()

    async def sign_up(self, name: str) -> None:
        # A bot account, marked as one for good before its first table (the lobby shows it).
        body = {"name": name, "bot": True}
        self.token = (await self.ok("POST", "/v1/players", body))["token"]

    async def join(self, invite: str) -> None:
        self.table_id = (await self.ok("POST", f"/v1/invites/{invite}"))["table"]["table_id"]

    async def create(self, preset: str, rules: JSON, opponent: str | None) -> str:
        """Create a table; with ``opponent``, seat a server bot of that level and start."""
        table = await self.ok("POST", "/v1/tables", {"preset": preset, "rules": rules})
        self.table_id = table["table_id"]
        if opponent is not None:
            await self.ok("POST", f"/v1/tables/{self.table_id}/bot", {"level": opponent})
        return str(table["invite_code"])

    async def play(self) -> list[JSON]:
        """Follow the table's socket and play until ``matches`` matches are over."""
        base = self.http.base_url
        ws_base = str(base.copy_with(scheme=base.scheme.replace("http", "ws"))).rstrip("/")
        url = f"{ws_base}/v1/tables/{self.table_id}/ws?token={self.token}"
        async with connect(url, proxy=None) as ws:
            async for raw in ws:
                message = json.loads(raw)
                kind = message["type"]
                if kind == "view":
                    await self.load_events()
                elif kind == "event":
                    self.keep(message["event"])
                    if message["event"]["type"] not in STEP_EVENTS:
                        continue
                elif kind != "your_turn":
                    continue
                if await self.step():
                    break
        return self.results

    def keep(self, event: JSON) -> None:
        """Keep the events of the current hand (a bot needs no more)."""
        if event["type"] == "hand_started":
            self.events = []
        self.events.append(event)

    async def load_events(self) -> None:
        """This seat's events so far (on connect, or when the socket resyncs with a view)."""
        self.events, since = [], 0
        while batch := await self.ok("GET", f"/v1/tables/{self.table_id}/events?since={since}"):
            for event in batch:
                self.keep(event)
            since = batch[-1]["seq"]

    async def step(self) -> bool:
        """Make every move this seat has now; True once the last match is over."""
        view = await self.ok("GET", f"/v1/tables/{self.table_id}")
        while True:
            path, body = self.next_request(view)
            if path == "done":
                return True
            if not path:
                return False
            if self.delay:
                await asyncio.sleep(self.delay)
            r = await self.call(
                "POST",
                f"/v1/tables/{self.table_id}/{path}",
                {**body, "expected_version": view["version"]},
            )
            if r.status_code == 409:
                return False  # the table moved on: its events are on their way
            if r.is_error:
                raise RuntimeError(f"POST {path}: {r.status_code} {r.text}")
            view = r.json()["table"]

    def next_request(self, view: JSON) -> tuple[str, JSON]:
        """What to post next for ``view`` ("" for nothing now, "done" when finished)."""
        game = view["game"]
        if game is None:
            start = view["status"] == "ready" and view["you"] == 0
            return ("start", {}) if start else ("", {})
        match = game["match"]
        if match["status"] == "finished":
            if not self.results or self.results[-1]["match_number"] != view["match_number"]:
                mine = view["you"]
                self.results.append(
                    {
                        "match_number": view["match_number"],
                        "seat": mine,
                        "winner": match["winner"],
                        "won": match["winner"] == mine,
                        "final_scores": match["final_scores"],
                    }
                )
            return ("done", {}) if len(self.results) >= self.matches else ("rematch", {})
        try:
            return endpoint(self.bot.choose(game, self.events))
        except NoMoveError:
            return "", {}


def _rules(pairs: Sequence[str]) -> JSON:
    """``--rule key=value`` overrides, each value read as JSON when it parses (numbers, bools)."""
    out: JSON = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def parser() -> argparse.ArgumentParser:
    summary = "Play a seat of a Gin Rummy table over the public API."
    p = argparse.ArgumentParser(prog="python -m app.bots.remote", description=summary)
    p.add_argument("--server", default="http://127.0.0.1:8000")
    p.add_argument("--level", default="medium", choices=LEVELS)
    p.add_argument("--name", default="")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--invite", help="join the table of this invite code")
    how.add_argument("--create", action="store_true", help="create a table and print its invite")
    p.add_argument("--preset", default="standard")
    p.add_argument("--rule", action="append", default=[], help="a rule override, key=value")
    p.add_argument("--vs", choices=("easy", "medium", "hard"), help="seat a server bot to play")
    p.add_argument("--matches", type=int, default=1)
    p.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each move")
    p.add_argument("--webhook", metavar="HOST:PORT", help="play from webhooks, listening here")
    p.add_argument("--webhook-url", help="the URL the server POSTs to (default from --webhook)")
    p.add_argument("--poll", type=float, default=10.0, help="webhook mode: look this often too")
    return p


async def run(argv: Sequence[str]) -> JSON:
    """Play as the arguments say; the summary: table id and each match's result."""
    args = parser().parse_args(argv)
    async with httpx.AsyncClient(base_url=args.server, timeout=30) as http:
        bot = RemoteBot(http, args.level, args.matches, args.delay)
        await bot.sign_up(args.name or f"{args.level}-bot")
        if args.invite:
            await bot.join(args.invite)
        else:
            invite = await bot.create(args.preset, _rules(args.rule), args.vs)
            if args.vs is None:
                print(json.dumps({"table_id": bot.table_id, "invite_code": invite}), flush=True)
        if args.webhook:
            results, counts = await remote_webhooks.play(
                bot, args.webhook, args.webhook_url, args.poll
            )
            return {"table_id": bot.table_id, "matches": results, "webhooks": counts}
        results = await bot.play()
    return {"table_id": bot.table_id, "matches": results}


def main() -> None:
    print(json.dumps(asyncio.run(run(sys.argv[1:]))))


if __name__ == "__main__":
    main()
