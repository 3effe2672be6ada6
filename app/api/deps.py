"""Dependencies as ``Annotated`` aliases: the service, the caller, the Idempotency-Key."""

from __future__ import annotations

import hashlib
from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.service.commands import Actor
from app.service.errors import InvalidError
from app.service.tables import Idempotency, TableService

_bearer = HTTPBearer(auto_error=False, description="The token from `POST /v1/players`.")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]

IDEMPOTENCY_KEY_MAX = 200


async def get_service(request: Request) -> TableService:
    # async: FastAPI runs a plain ``def`` dependency in a worker thread, a hop per request.
    service: TableService = request.app.state.service
    return service


ServiceDep = Annotated[TableService, Depends(get_service)]


async def current_actor(service: ServiceDep, credentials: Credentials) -> Actor:
    """The player whose bearer token came with the request (401 otherwise)."""
    return await service.authenticate(None if credentials is None else credentials.credentials)


async def optional_actor(service: ServiceDep, credentials: Credentials) -> Actor | None:
    """The caller if a token came (a bad token is still 401); None for an anonymous caller."""
    if credentials is None:
        return None
    return await service.authenticate(credentials.credentials)


CurrentActor = Annotated[Actor, Depends(current_actor)]
OptionalActor = Annotated[Actor | None, Depends(optional_actor)]


async def idempotency(
    request: Request,
    key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            description="Retrying with the same key returns the first response and applies "
            "nothing twice.",
        ),
    ] = None,
) -> Idempotency | None:
    """The request's Idempotency-Key with a fingerprint of method, path and body.

    Keys are per player. The first successful response is stored in the same transaction as
    the change it made; a retry gets it back (``Idempotency-Replayed: true``) and applies
    nothing. A refused request stores nothing, since it applied nothing: its retry is judged
    afresh. The same key with another method, path or body is 409 ``idempotency_key_reused``.
    """
    if key is None:
        return None
    if not 1 <= len(key) <= IDEMPOTENCY_KEY_MAX:
        raise InvalidError(
            "invalid_idempotency_key",
            f"Idempotency-Key has 1 to {IDEMPOTENCY_KEY_MAX} characters",
        )
    digest = hashlib.sha256(f"{request.method} {request.url.path}\n".encode())
    digest.update(await request.body())
    return Idempotency(key, digest.hexdigest())


IdempotencyDep = Annotated[Idempotency | None, Depends(idempotency)]
