"""The web client (``web/``, built to ``web/dist``) served at ``/``, beside the API.

Mounted after every API route, so those keep their paths. A path that is not a built file is
one of the client's own pages (``/t/<table_id>``): it gets ``index.html``, and the client
routes. Hashed assets are cached for good; ``index.html`` is revalidated on every load.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

WEB_DIST = Path(__file__).resolve().parents[3] / "web" / "dist"
# API prefixes that never fall back to the client: an unknown API path stays a 404.
API_PREFIXES = ("v1/", "docs", "redoc", "openapi.json", "healthz", "readyz", "metrics")


# The client's pages run only the server's own scripts (the build has no inline script: a test
# checks) and talk only to this origin; inline styles are allowed (the client sets a few).
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


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


def mount(app: FastAPI, directory: Path = WEB_DIST) -> None:
    """Serve the built client at ``/`` when it has been built (``make run`` builds it)."""
    if (directory / "index.html").is_file():
        app.mount("/", ClientFiles(directory=directory, html=True), name="web")
