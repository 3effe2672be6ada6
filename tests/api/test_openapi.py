"""The OpenAPI document shows an example for every request body and every JSON response."""

from __future__ import annotations

from typing import Any

from app.api.edge.ratelimit import EXEMPT
from app.main import create_app


def _has_example(content: dict[str, Any], schemas: dict[str, Any]) -> bool:
    for media in content.values():
        if "example" in media or "examples" in media:
            return True
        schema = media.get("schema", {})
        refs = [schema.get("$ref"), schema.get("items", {}).get("$ref")]
        refs += [alt.get("$ref") for alt in schema.get("anyOf", [])]
        if any(ref and "examples" in schemas[ref.split("/")[-1]] for ref in refs):
            return True
    return False


def test_every_operation_has_request_and_response_examples() -> None:
    spec = create_app().openapi()
    schemas = spec["components"]["schemas"]
    missing = []
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            body = op.get("requestBody")
            if body and not _has_example(body["content"], schemas):
                missing.append(f"{method} {path} request")
            for status, response in op["responses"].items():
                if "content" in response and not _has_example(response["content"], schemas):
                    missing.append(f"{method} {path} {status}")
    assert not missing
    assert len(spec["paths"]) >= 20


# Changes that answer with a new secret (a token, a socket ticket): a replay would need the
# secret stored in the clear, so they take no Idempotency-Key; revoking a token is idempotent
# by nature (again: 404 token_not_found, nothing changes), and so are storing a push
# subscription (one row per endpoint) and deleting one.
NOT_REPLAYED = {
    "post /v1/players/me/push-subscriptions",
    "delete /v1/players/me/push-subscriptions/{subscription_id}",
    "post /v1/players/me/tokens",
    "post /v1/players/me/tokens/rotate",
    "delete /v1/players/me/tokens/{token_id}",
    "post /v1/ws-tickets",
    # Notification settings: PUT and DELETE set a state (the same again changes nothing), and
    # the webhook's answer carries its signing secret.
    "put /v1/players/me/webhook",
    "delete /v1/players/me/webhook",
    "put /v1/players/me/notifications",
    # A test ping is a probe: each one is sent anew and changes nothing but the webhook's health.
    "post /v1/players/me/webhook/test",
    # Tournaments: joining, withdrawing and starting set a state (a retry of a join or a start
    # is refused with already_entered or tournament_started, one of a withdrawal changes
    # nothing); a bot entry is the organiser's, bounded by the capacity, its answer listing
    # the entrants.
    "post /v1/tournaments/{tournament_id}/join",
    "post /v1/tournaments/{tournament_id}/withdraw",
    "post /v1/tournaments/{tournament_id}/bots",
    "post /v1/tournaments/{tournament_id}/start",
    # The lobby's changes of one seek or challenge: each leaves ``open`` once, so the same
    # again changes nothing (409 seek_closed; GET shows the outcome); marking a bot account
    # is a state (again: 200, still marked).
    "delete /v1/seeks/{seek_id}",
    "post /v1/seeks/{seek_id}/accept",
    "post /v1/seeks/{seek_id}/bot",
    "delete /v1/challenges/{challenge_id}",
    "post /v1/challenges/{challenge_id}/accept",
    "post /v1/challenges/{challenge_id}/decline",
    "post /v1/players/me/bot",
    # A bot's availability for the ladder is a state with a lapse: the same again renews it.
    "put /v1/bots/me/available",
}


def test_every_authenticated_change_documents_the_idempotency_key() -> None:
    # Command routes read the header themselves (cheaper than a FastAPI Header parameter) and
    # document it with ``openapi_extra``: a route that forgets to would drop it from the docs.
    spec = create_app().openapi()
    undocumented = [
        f"{method} {path}"
        for path, operations in spec["paths"].items()
        for method, op in operations.items()
        if method != "get"
        and f"{method} {path}" not in NOT_REPLAYED
        and {"HTTPBearer": []} in op.get("security", [])
        and not any(
            p["in"] == "header" and p["name"] == "Idempotency-Key" for p in op.get("parameters", [])
        )
    ]
    assert not undocumented
    assert spec["components"]["securitySchemes"]["HTTPBearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "The token from `POST /v1/players`.",
    }


def test_the_document_says_what_the_server_checks() -> None:
    spec = create_app().openapi()
    paths = spec["paths"]
    # Spectators read a table without a token: the scheme is optional there.
    for path in ("/v1/tables/{table_id}", "/v1/tables/{table_id}/events"):
        assert paths[path]["get"]["security"] == [{"HTTPBearer": []}, {}]
    assert paths["/v1/players/me"]["get"]["security"] == [{"HTTPBearer": []}]
    for path, operations in paths.items():
        for method, op in operations.items():
            keys = [p for p in op.get("parameters", []) if p["name"] == "Idempotency-Key"]
            if keys:
                # A reused key is 409 idempotency_key_reused, wherever a key is taken.
                assert "409" in op["responses"], f"{method} {path}"
                schema = keys[0]["schema"]
                assert (schema["minLength"], schema["maxLength"]) == (1, 200)
            if "requestBody" in op:
                assert "413" in op["responses"], f"{method} {path}"


def test_every_rate_limited_operation_documents_429_with_retry_after() -> None:
    # Every request but the health routes' counts against the per-token and per-address limits
    # (app/api/edge/ratelimit.py), so every other operation can answer 429.
    spec = create_app().openapi()
    wrong = []
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            response = op["responses"].get("429")
            if path in EXEMPT:
                if response is not None:
                    wrong.append(f"{method} {path}: exempt, yet lists 429")
                continue
            if response is None:
                wrong.append(f"{method} {path}: no 429")
                continue
            example = response["content"]["application/json"]["example"]
            headers = response.get("headers", {})
            if example["code"] != "rate_limited" or "Retry-After" not in headers:
                wrong.append(f"{method} {path}: {response}")
    assert not wrong
    assert EXEMPT - {"/metrics"} <= set(spec["paths"])  # /metrics is not in the document
