"""Dependencies as ``Annotated`` aliases: the service, the caller, the Idempotency-Key.

FastAPI resolves each dependency, sub-dependency and header parameter of a route on its own, at
a cost that rivalled a whole move's engine work; so the caller of a route is one dependency
that reads the token (and for a command the Idempotency-Key) from the request itself. Each is
a security scheme, so the OpenAPI document still shows the routes' bearer authentication; a
command route documents the Idempotency-Key header with ``openapi_extra=IDEMPOTENT``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.openapi.models import HTTPBearer as HTTPBearerModel
from fastapi.security.base import SecurityBase
from starlette.datastructures import Headers

from app.errors import InvalidError
from app.service.pipeline import Idempotency, TableService
from app.table.commands import Actor

IDEMPOTENCY_KEY_MAX = 200
# Visible ASCII only: what every HTTP stack carries unchanged, and every database stores.
IDEMPOTENCY_KEY = re.compile(rf"[!-~]{{1,{IDEMPOTENCY_KEY_MAX}}}")
_IDEMPOTENCY_KEY_DOC = (
    "Retrying with the same key returns the first response and applies nothing twice; "
    f"1 to {IDEMPOTENCY_KEY_MAX} visible ASCII characters (422 invalid_idempotency_key). "
    "The same key with another request is 409 idempotency_key_reused."
)
# The optional header, with the constraints ``idempotency`` enforces.
IDEMPOTENT: dict[str, Any] = {
    "parameters": [
        {
            "name": "Idempotency-Key",
            "in": "header",
            "required": False,
            "description": _IDEMPOTENCY_KEY_DOC,
            "schema": {
                "type": "string",
                "minLength": 1,
                "maxLength": IDEMPOTENCY_KEY_MAX,
                "pattern": f"^{IDEMPOTENCY_KEY.pattern}$",
                "title": "Idempotency-Key",
            },
        }
    ]
}

# A read a spectator may make without a token: ``{}`` in ``security`` makes the scheme optional.
TOKEN_OPTIONAL: dict[str, Any] = {"security": [{}]}


def bearer_token(headers: Headers) -> str | None:
    """The token of an ``Authorization: Bearer`` header; None without one."""
    return bearer(headers.get("authorization", ""))


def bearer(authorization: str) -> str | None:
    """The token of an ``Authorization`` header's value when it is ``Bearer``; else None."""
    scheme, _, credentials = authorization.partition(" ")
    return (credentials.strip() or None) if scheme.lower() == "bearer" else None


async def get_service(request: Request) -> TableService:
    # async: FastAPI runs a plain ``def`` dependency in a worker thread, a hop per request.
    service: TableService = request.app.state.service
    return service


ServiceDep = Annotated[TableService, Depends(get_service)]


@dataclass(frozen=True, slots=True)
class Caller:
    """What a command route needs beside its body: the service, the player, the key, and the
    client's address (for the limits counted per address)."""

    service: TableService
    actor: Actor
    idempotency: Idempotency | None
    address: str | None = None


def client_address(request: Request) -> str | None:
    """The client's address (behind a trusted proxy, the one it forwarded: see
    ``app.api.edge.ratelimit``); None when the server does not know it."""
    return None if request.client is None else request.client.host


class _Bearer(SecurityBase):
    """A dependency documented as the ``HTTPBearer`` scheme."""

    def __init__(self) -> None:
        self.model = HTTPBearerModel(description="The token from `POST /v1/players`.")
        self.scheme_name = "HTTPBearer"


class _CurrentActor(_Bearer):
    async def __call__(self, request: Request) -> Actor:
        """The player whose bearer token came with the request (401 otherwise)."""
        service: TableService = request.app.state.service
        return await service.authenticate(bearer_token(request.headers))


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who reads a table: the service, and the player or None for an anonymous spectator."""

    service: TableService
    actor: Actor | None


class _Viewer(_Bearer):
    async def __call__(self, request: Request) -> Viewer:
        """The caller if a token came (a bad token is still 401); None for an anonymous caller."""
        service: TableService = request.app.state.service
        token = bearer_token(request.headers)
        return Viewer(service, None if token is None else await service.authenticate(token))


async def command_caller(request: Request) -> Caller:
    """The authenticated player (401 otherwise) and the request's Idempotency-Key."""
    service: TableService = request.app.state.service
    actor = await service.authenticate(bearer_token(request.headers))
    return Caller(service, actor, await idempotency(request), client_address(request))


class _CommandCaller(_Bearer):
    async def __call__(self, request: Request) -> Caller:
        """The authenticated player (401 otherwise) and the request's Idempotency-Key."""
        return await command_caller(request)


async def idempotency(request: Request) -> Idempotency | None:
    """The request's Idempotency-Key with a fingerprint of method, path and body.

    Keys are per player. The first successful response is stored in the same transaction as
    the change it made; a retry gets it back (``Idempotency-Replayed: true``) and applies
    nothing. A refused request stores nothing, since it applied nothing: its retry is judged
    afresh. The same key with another method, path or body is 409 ``idempotency_key_reused``.
    """
    key = request.headers.get("idempotency-key")
    if key is None:
        return None
    return idempotency_of(key, request.method, request.url.path, await request.body())


def idempotency_of(key: str, method: str, path: str, body: bytes) -> Idempotency:
    """``key`` checked, with the fingerprint of the request (``path``: its URL's path)."""
    if not IDEMPOTENCY_KEY.fullmatch(key):
        raise InvalidError(
            "invalid_idempotency_key",
            f"Idempotency-Key has 1 to {IDEMPOTENCY_KEY_MAX} visible ASCII characters",
        )
    digest = hashlib.sha256(f"{method} {path}\n".encode())
    digest.update(body)
    return Idempotency(key, digest.hexdigest())


CurrentActor = Annotated[Actor, Depends(_CurrentActor())]
ViewerDep = Annotated[Viewer, Depends(_Viewer())]
CommandCaller = Annotated[Caller, Depends(_CommandCaller())]
