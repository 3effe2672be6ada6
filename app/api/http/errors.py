"""Every error type mapped to HTTP in one place; every error body is ``{"code", "message"}``.

=====================  ======  =========================================================
error                  status  codes
=====================  ======  =========================================================
UnauthenticatedError   401     unauthorized, token_expired (invalid_ticket, token_revoked:
                               sockets only)
ForbiddenError         403     not_seated, not_creator, not_yours, not_challenged
                               (origin_not_allowed: sockets only)
NotFoundError          404     table_not_found, invite_not_found, hand_not_found,
                               match_not_found, player_not_found,
                               token_not_found, push_subscription_not_found,
                               push_disabled, seek_not_found, player_not_found,
                               not_found (unknown route)
ConflictError          409     stale_version, table_full, already_seated, match_not_started,
                               match_already_started, waiting_for_opponent,
                               match_not_finished, rematch_already_offered, no_rematch_offer,
                               hand_not_finished, idempotency_key_reused,
                               match_in_progress, no_bot, bot_unchanged, nothing_to_claim,
                               invite_mismatch, too_many_open_tables, hints_off,
                               seek_closed,
                               own_seek, not_declinable, no_bot_offer, too_many_seeks,
                               too_many_live_games, too_many_correspondence_games,
                               ambiguous_name, already_played
RuleError (engine)     409     the engine's code: not_your_turn, wrong_phase, ...
RuleError (input)      422     invalid_card, card_required, unknown_action, unknown_preset,
                               invalid_ruleset
InvalidError           422     invalid_chat, invalid_deck_design, invalid_bot_level,
                               invalid_idempotency_key, invalid_push_subscription,
                               invalid_name, reserved_name, invalid_time_control,
                               hints_on_rated,
                               bot_offer_live_only, invalid_expiry, challenge_yourself
validation             422     invalid_request (with ``details``: each error's ``loc``, ``msg``
                               and ``type``, never the input): a body that is not strict JSON
                               (``app.api.edge.request_body``) or does not fit its schema
BodyTooDeep            422     body_too_deep: a body nested deeper than ``max_body_depth``
request_body.BodyLimit 413     payload_too_large: a body over ``max_body_bytes``
HTTPException          405     method_not_allowed (``Allow`` lists every method of the path)
RateLimitedError       429     rate_limited, review_queue_full (with a ``Retry-After``
                               header)
database unreachable   503     database_unavailable (with ``Retry-After: 1``): the
                               connection dropped (a restart) or another process held
                               SQLite's lock too long; the request changed nothing
=====================  ======  =========================================================
"""

from __future__ import annotations

import logging
import math
import sqlite3

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException
from starlette.routing import Match

from app.engine import RuleError
from app.errors import (
    ConflictError,
    ForbiddenError,
    InvalidError,
    NotFoundError,
    RateLimitedError,
    ServiceError,
    UnauthenticatedError,
)
from app.metrics import DATABASE_ERRORS
from app.store.db import ASYNCPG_CONNECTION_ERRORS

log = logging.getLogger(__name__)

STATUS: dict[type[ServiceError], int] = {
    UnauthenticatedError: 401,
    ForbiddenError: 403,
    NotFoundError: 404,
    ConflictError: 409,
    InvalidError: 422,
    RateLimitedError: 429,
}
# Engine codes that describe malformed input rather than a rule refusing a well-formed move.
INPUT_CODES = frozenset(
    {"invalid_card", "card_required", "unknown_action", "unknown_preset", "invalid_ruleset"}
)


def error_body(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


async def _service_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ServiceError)
    headers: dict[str, str] = {}
    if isinstance(exc, UnauthenticatedError):
        headers["WWW-Authenticate"] = "Bearer"
    if isinstance(exc, RateLimitedError):
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    status = next(s for cls, s in STATUS.items() if isinstance(exc, cls))
    return JSONResponse(exc.to_dict(), status_code=status, headers=headers)


async def _rule_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RuleError)
    return JSONResponse(exc.to_dict(), status_code=422 if exc.code in INPUT_CODES else 409)


def payload_too_large(limit: int) -> dict[str, str]:
    return error_body("payload_too_large", f"a request body has at most {limit} bytes")


class BodyTooDeep(HTTPException):
    """A JSON body nested deeper than ``limit`` (``app.api.edge.request_body``). Raised where a
    route reads its body: FastAPI passes an HTTPException on to the handlers untouched."""

    def __init__(self, limit: int) -> None:
        message = f"a request body nests arrays and objects at most {limit} levels deep"
        super().__init__(422, message)


async def _body_too_deep(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, BodyTooDeep)
    return JSONResponse(error_body("body_too_deep", str(exc.detail)), status_code=422)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    # Where and why, never what: the input (and a ``ctx`` that may quote it) is the client's
    # own, can be anything JSON holds (nested, NaN), and would make every 422 as costly to
    # write as what the client chose to send.
    details = [
        {
            "loc": [_text(p) if isinstance(p, str) else p for p in error["loc"]],
            "msg": _text(error["msg"]),
            "type": error["type"],
        }
        for error in errors
    ]
    first = errors[0] if errors else {}
    if first.get("type") == "json_invalid":  # the parser's reason, which quotes no input
        message = f"the body is not valid JSON: {first.get('ctx', {}).get('error', '')}"
    else:
        where = ".".join(str(p) for p in details[0]["loc"]) if details else ""
        message = f"{where}: {details[0]['msg']}" if where else "invalid request"
    return JSONResponse(
        {"code": "invalid_request", "message": message, "details": details}, status_code=422
    )


def _text(value: str) -> str:
    """``value`` with a lone surrogate (which no UTF-8 encoder takes) as its ``\\udXXX``
    escape: a path or query parameter may carry one."""
    return value.encode("utf-8", "backslashreplace").decode()


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    headers = exc.headers
    if exc.status_code == 413:  # ``request_body.BodyLimit`` counted a streamed body past it
        body = payload_too_large(request.app.state.settings.max_body_bytes)
    else:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        body = error_body(code, str(exc.detail))
    if exc.status_code == 405:
        # Starlette lists the methods of the first route on the path only.
        headers = {"Allow": ", ".join(_allowed_methods(request))}
    return JSONResponse(body, status_code=exc.status_code, headers=headers)


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app answers on the request's path."""
    routes = request.app.router.routes
    return [
        method
        for method in ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")
        if any(r.matches({**request.scope, "method": method})[0] is Match.FULL for r in routes)
    ]


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    """A lost connection or a lock that never came: 503, try again; anything else is a bug."""
    if isinstance(exc, DBAPIError) and not (
        exc.connection_invalidated
        or getattr(exc.orig, "sqlite_errorcode", None)
        in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    ):
        DATABASE_ERRORS.labels("error").inc()
        return await _unexpected(request, exc)
    DATABASE_ERRORS.labels("unavailable").inc()
    log.warning("database unavailable: %s", exc)
    return JSONResponse(
        error_body("database_unavailable", "the database did not answer; try again"),
        status_code=503,
        headers={"Retry-After": "1"},
    )


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return JSONResponse(error_body("internal_error", "internal server error"), status_code=500)


def install(app: FastAPI) -> None:
    """Register every handler on ``app``."""
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(RuleError, _rule_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(BodyTooDeep, _body_too_deep)
    # The one-statement write goes to asyncpg directly, whose errors SQLAlchemy never wraps.
    # A database that refuses connections (down, restarting) is unavailable too, not a bug.
    database_errors: list[type[Exception]] = [
        DBAPIError,
        *ASYNCPG_CONNECTION_ERRORS,
        ConnectionRefusedError,
    ]
    for error in database_errors:
        app.add_exception_handler(error, _database_error)
    app.add_exception_handler(Exception, _unexpected)
