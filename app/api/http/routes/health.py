"""Liveness, readiness and metrics, for orchestrators, load balancers and Prometheus.

- ``/livez`` (and its older name ``/healthz``): the process answers; it touches nothing else.
- ``/readyz``: runs every check of ``app.state.readiness`` (a ``Readiness``) at once. A failed
  required check (the database) is 503 ``not_ready``: send this process no traffic. A failed
  optional one (Redis) is 200 ``degraded``: the process serves, with less. Either way the body
  names each check and says ``ok`` or ``failed``, nothing more: anyone may ask, and why a
  check failed (a host name, a driver's message) is for the operator, in the log, written
  once when a check starts failing (or fails otherwise) and once when it passes again.
- ``/metrics``: every metric of the default ``prometheus_client`` registry, as text (not served
  through ``deploy/nginx.conf``: Prometheus scrapes each replica's own port).
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

from app.api.http.errors import error_body
from app.api.http.schemas.common import StatusOut
from app.metrics import TABLES_IN_PLAY
from app.service.sampled import Sampled

log = logging.getLogger(__name__)

router = APIRouter(tags=["health"])

Check = Callable[[], Awaitable[object]]
# A check that has not answered by then has failed.
CHECK_TIMEOUT = 2.0
OK = "ok"
FAILED = "failed"


@dataclass
class Readiness:
    """The named checks of ``/readyz``: each an async callable that raises when it fails.

    ``add("bus", bus_check(hub), required=False)`` adds one; a required check's failure makes the
    process unready (503), an optional one's only degraded (200). Each change of a check's
    outcome is logged once (a probe every 250 ms must not write a line each time).
    """

    checks: dict[str, tuple[Check, bool]] = field(default_factory=dict)
    last: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, check: Check, *, required: bool = True) -> None:
        self.checks[name] = (check, required)

    async def run(self) -> tuple[bool, bool, dict[str, str]]:
        """(ready, degraded, each check's outcome: ``ok`` or ``failed``)."""
        names = list(self.checks)
        outcomes = await asyncio.gather(*(self._one(n) for n in names))
        results = {n: OK if o == OK else FAILED for n, o in zip(names, outcomes, strict=True)}
        failed = [n for n, outcome in results.items() if outcome != OK]
        ready = not any(self.checks[n][1] for n in failed)
        return ready, bool(failed), results

    async def _one(self, name: str) -> str:
        check, _ = self.checks[name]
        try:
            async with asyncio.timeout(CHECK_TIMEOUT):
                await check()
        except TimeoutError:
            outcome = f"no answer within {CHECK_TIMEOUT:g} s"
        except Exception as exc:
            outcome = str(exc) or type(exc).__name__
        else:
            outcome = OK
        before = self.last.get(name, OK)
        self.last[name] = outcome
        if outcome != before:
            if outcome == OK:
                log.warning("readiness check %s passes again", name)
            else:
                log.warning("readiness check %s failed: %s", name, outcome)
        return outcome


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
                        "checks": {"database": "failed"},
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
    """Prometheus text format; the tables in play as last counted in the database (at most
    ``metrics_count_max_age`` seconds before, see ``app.service.sampled``)."""
    tables_in_play: Sampled = request.app.state.tables_in_play
    try:
        TABLES_IN_PLAY.set(await tables_in_play.get())
    except Exception as exc:
        log.warning("counting tables in play failed: %s", exc)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
