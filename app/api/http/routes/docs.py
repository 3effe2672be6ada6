"""The API's documentation: ``/docs`` (Swagger UI) and ``/redoc`` under a strict CSP, and the
sockets' AsyncAPI document, ``/asyncapi.json``.

Their scripts and styles are fastapi-offline's copies, served from ``STATIC`` here, so the pages
need no other host. Each page gets the headers of the server's pages (``web.page_headers``):
scripts from this origin only, and Swagger UI's one inline script (FastAPI's start-up call),
allowed by its hash, taken from the page as it is served. The one thing either page asks for
that the policy refuses is ReDoc's "by Redocly" logo, an image from cdn.redoc.ly.
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from app.api.http.routes.web import page_headers
from app.api.live.asyncapi import asyncapi

# Where the app mounts fastapi-offline's assets (``FastAPIOffline(static_url=STATIC)``).
STATIC = "/static-offline-docs"
# Swagger UI's own settings: no validator badge, which would load an image from swagger.io.
SWAGGER_UI = {"validatorUrl": None}

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)

router = APIRouter(include_in_schema=False)


def _secured(page: HTMLResponse, blob_workers: bool = False) -> HTMLResponse:
    """``page`` with the pages' headers, its inline scripts allowed by their hashes."""
    scripts = _INLINE_SCRIPT.findall(bytes(page.body).decode())
    page.headers.update(page_headers(*scripts, blob_workers=blob_workers))
    return page


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    """Swagger UI over the OpenAPI document."""
    root = request.scope.get("root_path", "")
    return _secured(
        get_swagger_ui_html(
            openapi_url=f"{root}{request.app.openapi_url}",
            title=f"{request.app.title} - Swagger UI",
            swagger_js_url=f"{root}{STATIC}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{STATIC}/swagger-ui.css",
            swagger_favicon_url=f"{root}{STATIC}/favicon.png",
            swagger_ui_parameters=SWAGGER_UI,
        )
    )


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    """ReDoc over the OpenAPI document."""
    root = request.scope.get("root_path", "")
    return _secured(
        get_redoc_html(
            openapi_url=f"{root}{request.app.openapi_url}",
            title=f"{request.app.title} - ReDoc",
            redoc_js_url=f"{root}{STATIC}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{STATIC}/favicon.png",
            with_google_fonts=False,
        ),
        blob_workers=True,  # its search index is built in a worker it makes from a blob
    )


@router.get("/asyncapi.json")
async def asyncapi_document() -> JSONResponse:
    """The AsyncAPI 3 document of both sockets (``app.api.live.asyncapi``)."""
    return JSONResponse(asyncapi())
