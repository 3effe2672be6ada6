"""Liveness and readiness for orchestrators."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.api.deps import ServiceDep
from app.api.errors import error_body
from app.api.schemas import StatusOut

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=StatusOut)
async def healthz() -> StatusOut:
    """The process is up."""
    return StatusOut(status="ok")


@router.get(
    "/readyz",
    response_model=StatusOut,
    responses={
        503: {
            "description": "database unreachable",
            "content": {
                "application/json": {
                    "example": error_body("database_unavailable", "the database does not answer")
                }
            },
        }
    },
)
async def readyz(service: ServiceDep) -> StatusOut | JSONResponse:
    """The database answers."""
    try:
        await service.db.ping()
    except Exception:
        return JSONResponse(
            error_body("database_unavailable", "the database does not answer"), status_code=503
        )
    return StatusOut(status="ok")
