"""What every command route shares: the response built from the pipeline's Result."""

from __future__ import annotations

from fastapi.responses import JSONResponse

from app.service.tables import Result


def command_response(result: Result) -> JSONResponse:
    """The pipeline's body; a replayed idempotent retry says so in ``Idempotency-Replayed``."""
    headers = {"Idempotency-Replayed": "true"} if result.replayed else None
    return JSONResponse(result.body, status_code=result.status_code, headers=headers)
