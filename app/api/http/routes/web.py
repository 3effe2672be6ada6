"""The web client (``web/``, built to ``web/dist``) served at ``/``, beside the API.

Mounted after every API route, so those keep their paths. A path that is not a built file is
one of the client's own pages (``/t/<table_id>``): it gets ``index.html``, and the client
routes. Hashed assets are cached for good; ``index.html`` is revalidated on every load.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Match, Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

WEB_DIST = Path(__file__).resolve().parents[4] / "web" / "dist"
# API prefixes that never fall back to the client: an unknown API path stays a 404.
API_PREFIXES = (
    "v1/",
    "docs",
    "redoc",
    "openapi.json",
    "healthz",
    "livez",
    "readyz",
    "metrics",
)


def page_headers(*inline_scripts: str, blob_workers: bool = False) -> dict[str, str]:
    """The headers of the server's HTML pages (the client's, the API docs'): each runs only the
    server's own scripts and the ``inline_scripts`` it names (allowed by their hashes), talks
    only to this origin, and is framed by no one; inline styles are allowed (the client sets a
    few); ``blob_workers``: its scripts may start workers from code they made (ReDoc's search).
    ``X-Content-Type-Options: nosniff`` is on every response (``app.api.edge.gateway``)."""
    hashes = "".join(
        f" 'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"
        for script in inline_scripts
    )
    workers = "worker-src 'self' blob:; " if blob_workers else ""
    return {
        "Content-Security-Policy": f"default-src 'self'; script-src 'self'{hashes}; {workers}"
        "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
        "Referrer-Policy": "no-referrer",
    }


# The client's pages: the build has no inline script (a test checks).
SECURITY_HEADERS = page_headers()


class ClientFiles(StaticFiles):
    """Static files with the single-page fallback to ``index.html``."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        try:
            response = await super().get_response(path, scope)
        except HTTPException as exc:
            if exc.status_code != 404 or path.startswith(API_PREFIXES):
                raise
            response = await super().get_response("index.html", scope)
        response.headers.update(SECURITY_HEADERS)
        if path.startswith("assets/"):
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        else:
            response.headers["Cache-Control"] = "no-cache"
        return response


class ClientMount(Mount):
    """The client's mount at ``/``: it never takes an API path, and only GET and HEAD.

    A plain mount at ``/`` matches every path and method in full, so it would win over an API
    route that matches a path but not its method (answering 405 with the wrong ``Allow``) and
    take unknown API paths. Here an API path never matches, and another method on a client's
    page matches in part only: it is answered 405 with ``Allow: GET, HEAD``.
    """

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or scope["path"].lstrip("/").startswith(API_PREFIXES):
            return Match.NONE, {}
        match, child = super().matches(scope)
        if match is Match.FULL and scope["method"] not in ("GET", "HEAD"):
            return Match.PARTIAL, child
        return match, child


def mount(app: FastAPI, directory: Path = WEB_DIST) -> None:
    """Serve the built client at ``/`` when it has been built (``make run`` builds it)."""
    if (directory / "index.html").is_file():
        app.router.routes.append(
            ClientMount("/", app=ClientFiles(directory=directory, html=True), name="web")
        )
