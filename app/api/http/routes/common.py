"""What every command route shares: the pipeline's call, and the response from its Result."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import JSONResponse

from app.api.http.deps import IDEMPOTENT, Caller
from app.api.http.schemas.common import error_responses
from app.api.http.schemas.tables import CommandOut, Versioned
from app.service.pipeline import Result
from app.table.commands import Command

COMMAND_ERRORS = error_responses(401, 403, 404, 409, 413, 422)
# A command's route: its response, its errors and its Idempotency-Key header.
COMMAND_ROUTE: dict[str, Any] = {
    "response_model": CommandOut,
    "responses": COMMAND_ERRORS,
    "openapi_extra": IDEMPOTENT,
}


def render(content: Any) -> bytes:
    """A JSON body by orjson: the same document as ``JSONResponse``, a tenth of the CPU."""
    return orjson.dumps(content)


class FastJSONResponse(JSONResponse):
    """JSON rendered by orjson (``render``)."""

    def render(self, content: Any) -> bytes:
        return render(content)


def command_response(result: Result) -> JSONResponse:
    """The pipeline's body; a replayed idempotent retry says so in ``Idempotency-Replayed``."""
    headers = {"Idempotency-Replayed": "true"} if result.replayed else None
    return FastJSONResponse(result.body, status_code=result.status_code, headers=headers)


async def submit(
    caller: Caller, table_id: str, command: Command, body: Versioned | None = None
) -> JSONResponse:
    """Run ``command`` through the pipeline, pinned to ``body.expected_version`` if given."""
    return command_response(await run(caller, table_id, command, body))


async def run(
    caller: Caller, table_id: str, command: Command, body: Versioned | None = None
) -> Result:
    """``submit``'s pipeline call: its Result, for a caller that writes the response itself."""
    return await caller.service.submit(
        table_id,
        caller.actor,
        command,
        expected_version=None if body is None else body.expected_version,
        idempotency=caller.idempotency,
        address=caller.address,
    )
