"""Socket tickets: ``POST /v1/ws-tickets`` (bearer) -> a single-use ticket for ``?ticket=``."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import CurrentActor, bearer_token
from app.api.http.schemas.common import error_responses
from app.api.http.schemas.players import TicketOut
from app.service.tickets import Tickets
from app.service.tokens import hash_token

router = APIRouter(tags=["live"], route_class=StrictJSONRoute)


@router.post(
    "/v1/ws-tickets", status_code=201, response_model=TicketOut, responses=error_responses(401)
)
async def create_ticket(request: Request, actor: CurrentActor) -> TicketOut:
    """A ticket that opens one WebSocket as you (``?ticket=``), valid for ``expires_in`` seconds:
    a browser's socket URL then carries no long-lived secret."""
    # The ticket stands for this request's token (``actor`` holds it): revoked, the token
    # takes its tickets and their sockets with it (``app.service.tickets``).
    tickets: Tickets = request.app.state.tickets
    token = bearer_token(request.headers)
    assert token is not None
    return TicketOut(ticket=await tickets.issue(hash_token(token)), expires_in=tickets.ttl)
