"""The bot kit's configuration: a TOML file (``ginrummy-bot --config bot.toml``), each key
overridable on the command line (docs/sdk.md lists them).

    server = "http://127.0.0.1:8000"
    name = "Rob"                      # the account's name when the kit signs one up
    token_file = "rob.token"          # its token is kept here (or give `token`)
    engine = ["python", "-m", "app.bots.engine", "--level", "hard"]   # or choose = "mybot:choose"
    matches = 1                       # per table, with rematches between
    concurrency = 8                   # tables played at once
    follow = true                     # also play every table the player's socket names
    ladder = true                     # say the account is available for the bot ladder, play it
    invites = ["K7Q2XJ"]
    accept_challenges = true          # the lobby (docs/sdk.md): challenges to this account
    challenges = { presets = ["standard"], rated = false }   # which to accept
    seek = [{ preset = "standard", rated = false }]          # seeks to keep open
    lobby_games = 0                   # stop after this many lobby tables (0: never)

    [[create]]                        # tables the kit creates; `vs` seats a server bot
    preset = "standard"
    rules = { target = 30 }
    vs = "easy"
    count = 2
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ginrummy_client.bot.lobby import ChallengeFilter

JSON = dict[str, Any]


@dataclass
class CreateSpec:
    """Tables to create: ``count`` of them with ``preset`` and ``rules``; ``vs`` seats a server
    bot of that level and starts, else the invite is printed and the kit waits for a player."""

    preset: str = "standard"
    rules: JSON = field(default_factory=dict)
    vs: str | None = None
    count: int = 1


@dataclass
class WebhookSpec:
    listen: str = "127.0.0.1:9100"
    url: str | None = None
    poll: float = 10.0


@dataclass
class Config:
    server: str = "http://127.0.0.1:8000"
    name: str = "bot"
    token: str | None = None
    token_file: str | None = None
    engine: list[str] = field(default_factory=list)
    choose: str | None = None
    engine_timeout: float = 30.0
    matches: int = 1
    concurrency: int = 8
    delay: float = 0.0
    follow: bool = False
    ladder: bool = False
    invites: list[str] = field(default_factory=list)
    create: list[CreateSpec] = field(default_factory=list)
    webhook: WebhookSpec | None = None
    accept_challenges: bool = False
    challenges: ChallengeFilter = field(default_factory=ChallengeFilter)
    seek: list[JSON] = field(default_factory=list)
    lobby_games: int = 0

    @classmethod
    def from_dict(cls, data: JSON) -> Config:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown settings: {', '.join(sorted(unknown))}")
        values = dict(data)
        values["create"] = [CreateSpec(**c) for c in data.get("create", [])]
        if isinstance(data.get("webhook"), dict):
            values["webhook"] = WebhookSpec(**data["webhook"])
        if isinstance(data.get("challenges"), dict):
            values["challenges"] = ChallengeFilter(**data["challenges"])
        if isinstance(values.get("engine"), str):
            values["engine"] = values["engine"].split()
        return cls(**values)

    @classmethod
    def load(cls, path: str | Path) -> Config:
        with open(path, "rb") as f:
            return cls.from_dict(tomllib.load(f))
