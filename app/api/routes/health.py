"""Liveness, readiness and metrics, for orchestrators, load balancers and Prometheus.

- ``/livez`` (and its older name ``/healthz``): the process answers; it touches nothing else.
- ``/readyz``: runs every check of ``app.state.readiness`` (a ``Readiness``) at once. A failed
  required check (the database) is 503 ``not_ready``: send this process no traffic. A failed
  optional one (Redis) is 200 ``degraded``: the process serves, with less. Either way the body
  names each check and how it went.
- ``/metrics``: every metric of the default ``prometheus_client`` registry, as text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict

from app.api.errors import error_body
from app.api.schemas import StatusOut
from app.metrics import TABLES_IN_PLAY
from app.service.tables import TableService

log = logging.getLogger(__name__)

router = APIRouter(tags=["health"])

Check = Callable[[], Awaitable[object]]
# A check that has not answered by then has failed.
CHECK_TIMEOUT = 2.0
OK = "ok"


@dataclass
class Readiness:
    """The named checks of ``/readyz``: each an async callable that raises when it fails.

    ``add("bus", hub.check, required=False)`` adds one; a required check's failure makes the
    process unready (503), an optional one's only degraded (200).
    """

    checks: dict[str, tuple[Check, bool]] = field(default_factory=dict)

    def add(self, name: str, check: Check, *, required: bool = True) -> None:
        self.checks[name] = (check, required)

    async def run(self) -> tuple[bool, bool, dict[str, str]]:
        """(ready, degraded, each check's outcome: ``ok`` or why it failed)."""
        names = list(self.checks)
        outcomes = await asyncio.gather(*(self._one(n) for n in names))
        results = dict(zip(names, outcomes, strict=True))
        failed = [n for n, outcome in results.items() if outcome != OK]
        ready = not any(self.checks[n][1] for n in failed)
        return ready, bool(failed), results

    async def _one(self, name: str) -> str:
        check, _ = self.checks[name]
        try:
            async with asyncio.timeout(CHECK_TIMEOUT):
                await check()
        except TimeoutError:
            return f"no answer within {CHECK_TIMEOUT:g} s"
        except Exception as exc:
            log.warning("readiness check %s failed: %s", name, exc)
            return str(exc) or type(exc).__name__
        return OK


class ReadinessOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"status": "ok", "checks": {"database": "ok"}}]}
    )

    status: Literal["ok", "degraded"]
    checks: dict[str, str]


@router.get("/livez", response_model=StatusOut)
async def livez() -> StatusOut:
    """The process is up (nothing else is checked)."""
    return StatusOut(status="ok")


@router.get("/healthz", response_model=StatusOut)
async def healthz() -> StatusOut:
    """The older name of ``/livez``."""
    return StatusOut(status="ok")


@router.get(
    "/readyz",
    response_model=ReadinessOut,
    responses={
        503: {
            "description": "a required dependency failed",
            "content": {
                "application/json": {
                    "example": {
                        **error_body("not_ready", "failed: database"),
                        "checks": {"database": "the database does not answer"},
                    }
                }
            },
        }
    },
)
async def readyz(request: Request) -> ReadinessOut | JSONResponse:
    """Every dependency check: the database (required), Redis when configured (optional)."""
    readiness: Readiness = request.app.state.readiness
    ready, degraded, checks = await readiness.run()
    if not ready:
        failed = ", ".join(n for n, outcome in checks.items() if outcome != OK)
        body = {**error_body("not_ready", f"failed: {failed}"), "checks": checks}
        return JSONResponse(body, status_code=503)
    return ReadinessOut(status="degraded" if degraded else "ok", checks=checks)


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Prometheus text format; the tables in play are counted in the database now."""
    service: TableService = request.app.state.service
    try:
        TABLES_IN_PLAY.set(await service.tables_in_play())
    except Exception as exc:
        log.warning("counting tables in play failed: %s", exc)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
