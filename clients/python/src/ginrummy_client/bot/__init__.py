"""The bot kit: ``ginrummy-bot`` and ``play(server, choose, ...)`` (docs/sdk.md)."""

from ginrummy_client.bot.config import Config, CreateSpec
from ginrummy_client.bot.engines import Engine, EngineError, ProcessEngine, PythonEngine
from ginrummy_client.bot.kit import BotKit, play
from ginrummy_client.bot.sources import Create, Follow, Invites, Ladder, Source
from ginrummy_client.bot.table import TablePlayer

__all__ = [
    "BotKit",
    "Config",
    "Create",
    "CreateSpec",
    "Engine",
    "EngineError",
    "Follow",
    "Invites",
    "Ladder",
    "ProcessEngine",
    "PythonEngine",
    "Source",
    "TablePlayer",
    "play",
]
