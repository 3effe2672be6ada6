"""The Gin Rummy server's Python client: REST (``Client``), the sockets (``TableSocket``,
``PlayerSocket``, ``LobbySocket``) with resume and backoff, a sync layer (``SyncClient``) and
the bot kit (``ginrummy_client.bot``). docs/sdk.md is the guide."""

from ginrummy_client.rest import ApiError, Client, endpoint
from ginrummy_client.sockets import (
    Backoff,
    LobbySocket,
    LostError,
    PlayerSocket,
    RefusedError,
    TableSocket,
)
from ginrummy_client.sync import SyncClient

__all__ = [
    "ApiError",
    "Backoff",
    "Client",
    "LobbySocket",
    "LostError",
    "PlayerSocket",
    "RefusedError",
    "SyncClient",
    "TableSocket",
    "endpoint",
]
