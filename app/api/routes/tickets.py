"""Socket tickets: ``POST /v1/ws-tickets`` (bearer) -> a single-use ticket for ``?ticket=``."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.api.deps import CurrentActor
from app.api.request_body import StrictJSONRoute
from app.api.schemas import TicketOut, error_responses
from app.service.tickets import Tickets

router = APIRouter(tags=["live"], route_class=StrictJSONRoute)


@router.post(
    "/v1/ws-tickets", status_code=201, response_model=TicketOut, responses=error_responses(401)
)
async def create_ticket(request: Request, actor: CurrentActor) -> TicketOut:
    """A ticket that opens one WebSocket as you (``?ticket=``), valid for ``expires_in`` seconds:
    a browser's socket URL then carries no long-lived secret."""
    tickets: Tickets = request.app.state.tickets
    return TicketOut(ticket=await tickets.issue(actor), expires_in=tickets.ttl)
