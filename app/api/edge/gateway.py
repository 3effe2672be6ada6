"""Every request's outer duties in one ASGI layer, and a plain move served right there.

Around every HTTP request and WebSocket session, in this order (each duty in its own module):
the request id, metrics and access line (``app.api.edge.access``); CORS (Starlette's
``CORSMiddleware``: preflights answered, its headers added); the rate limits
(``app.api.edge.ratelimit``: a refused request goes no further). Then a POST to a move route goes to
``app.api.edge.move_lane.MoveLane``, everything else (and a move that is not the plain case) to
the app: the body limit (``app.api.edge.request_body.BodyLimit``), the error handlers, the routes.

These were three middlewares, each a coroutine and a ``send`` wrapper per request; a move also
went through the four layers under them (body limit, exception middleware, FastAPI's exit
stack, the router), which cost a move more CPU than the pipeline's own work (see
docs/history/performance.md). A request without an ``Origin`` header (every client but a
browser) never needs CORS: a move then skips it, and its response says ``Vary: Origin`` as CORS
would.

Every response, whichever way it went, says ``X-Content-Type-Options: nosniff``: a browser
never reads a JSON error (which may quote a client's text) or an asset as another type.
"""

from __future__ import annotations

from typing import Any

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.edge import access, ratelimit
from app.api.edge.move_lane import MOVE, MoveLane

ORIGIN = b"origin"
# The headers every response carries, and a move's that skipped CORS.
EVERY_RESPONSE = ((b"x-content-type-options", b"nosniff"),)
WITHOUT_CORS = (*EVERY_RESPONSE, (b"vary", b"Origin"))


def _has_origin(scope: Scope) -> bool:
    return any(name == ORIGIN for name, _ in scope["headers"])


class Gateway:
    """The outer duties of every request (see the module docstring); ``cors``: the options of
    Starlette's ``CORSMiddleware``."""

    def __init__(self, app: ASGIApp, cors: dict[str, Any], moves: MoveLane | None) -> None:
        self.app = app
        self.moves = moves
        self.cors = CORSMiddleware(self._limited, **cors)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if self.moves is not None and self.moves.match(scope) and not _has_origin(scope):
                await access.http(self._limited, scope, receive, send, WITHOUT_CORS)
            else:
                await access.http(self.cors, scope, receive, send, EVERY_RESPONSE)
        elif kind == "websocket":
            await access.websocket(self._limited, scope, receive, send)  # no CORS for sockets
        else:
            await self.app(scope, receive, send)

    async def _limited(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = await ratelimit.over_limit(scope)
        if refused is not None:
            await ratelimit.refuse(refused, scope, receive, send)
        elif self.moves is not None and MOVE in scope:
            await self.moves.serve(scope, receive, send, self.app)
        else:
            await self.app(scope, receive, send)
