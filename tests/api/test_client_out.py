"""The server's socket messages (``app/api/live/client_out.py``) against their schema
(``app/api/live/messages.py``): what is built is what is documented. (A ``view``, an ``ack``
and the events hold a real table: test_live.py checks those it receives against the schema.)"""

from __future__ import annotations

import orjson
import pytest

from app.api.live import client_out
from app.api.live.messages import SERVER_MESSAGES
from app.engine import RuleError
from app.errors import NotFoundError

BUILT = {
    "error": client_out.error(NotFoundError("table_not_found", "no table 'nope'"), "m-1"),
    "rule error": client_out.error(RuleError("not_your_turn", "it is the other player's turn")),
    "invalid_message": client_out.invalid_message("kind: Field required"),
    "token_revoked": client_out.TOKEN_REVOKED,
    "flooded": client_out.FLOODED,
    "pong": client_out.pong("p-1"),
    "pong without id": client_out.pong(None),
    "your_turn": client_out.your_turn("t", 2, "draw"),
    "heartbeat": client_out.heartbeat(11),
    "player's heartbeat": client_out.heartbeat(None),
}


@pytest.mark.parametrize("name", sorted(BUILT))
def test_each_built_message_is_one_of_the_schema(name: str) -> None:
    raw = BUILT[name]
    model = SERVER_MESSAGES.validate_json(raw)
    # Nothing dropped or renamed on the way: the model gives back exactly what was sent.
    assert model.model_dump(mode="json") == orjson.loads(raw)
