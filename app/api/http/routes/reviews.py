"""Reviews and hints: a finished hand's review by LUNA, a match's summary, a hint now."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import CurrentActor
from app.api.http.schemas.common import INT32, error_responses
from app.api.http.schemas.reviews import HandReviewOut, HintOut, MatchReviewOut
from app.service.workers.reviews import Reviews

router = APIRouter(tags=["reviews"], route_class=StrictJSONRoute)


def _reviews(request: Request) -> Reviews:
    reviews: Reviews = request.app.state.reviews
    return reviews


@router.get(
    "/v1/tables/{table_id}/hands/{number}/review",
    response_model=HandReviewOut,
    responses={
        202: {"model": HandReviewOut, "description": "pending: ask again after Retry-After"},
        **error_responses(404, 409, 422),
    },
)
async def hand_review(
    table_id: str,
    number: Annotated[int, Path(ge=1, le=INT32)],
    request: Request,
    match: Annotated[int | None, Query(ge=1, le=INT32, description="default: latest")] = None,
) -> JSONResponse:
    """Every decision of each seat in a finished hand, judged by LUNA from that seat's own
    information (409 ``hand_not_finished`` while it is played; 202 ``pending`` while it is
    computed; 429 ``review_queue_full`` when too many are)."""
    answer = await _reviews(request).hand(table_id, number, match)
    if answer.done:
        return JSONResponse(answer.body)
    return JSONResponse(answer.body, status_code=202, headers={"Retry-After": "2"})


@router.get(
    "/v1/tables/{table_id}/matches/{number}/review",
    response_model=MatchReviewOut,
    responses=error_responses(404, 422),
)
async def match_review(
    table_id: str, number: Annotated[int, Path(ge=1, le=INT32)], request: Request
) -> dict[str, Any]:
    """Each finished hand of the match with its seats' summary (hands not yet reviewed are
    started and show ``pending``), and the seats' summary over the reviewed hands."""
    return await _reviews(request).match(table_id, number)


@router.get(
    "/v1/tables/{table_id}/hint",
    response_model=HintOut,
    responses=error_responses(401, 403, 404, 409, 422),
)
async def hint(table_id: str, actor: CurrentActor, request: Request) -> dict[str, Any]:
    """What LUNA would play now for your seat, from your view only, at a small budget: a
    table created with hints on (409 ``hints_off``; never rated), your turn (409
    ``not_your_turn``)."""
    return await _reviews(request).hint(table_id, actor)
