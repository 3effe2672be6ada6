"""``openapi-examples/`` holds a valid request and response for every endpoint and WS message.

HTTP exchanges are checked against the app's OpenAPI document (``$ref``s resolved against its
components), WebSocket messages against their pydantic models and the exported JSON schema.
Regenerate the files with ``python -m scripts.openapi_examples``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from app.api.live.messages import CLIENT_MESSAGES, MESSAGE_MODELS, SERVER_MESSAGES, ws_schema
from app.main import create_app

ROOT = Path(__file__).resolve().parents[2] / "openapi-examples"
RECORD_SCHEMA = json.loads(
    (ROOT.parent / "docs" / "schemas" / "match-record.schema.json").read_text()
)
SPEC = create_app().openapi()
OPERATIONS = {
    (method.upper(), path): op for path, ops in SPEC["paths"].items() for method, op in ops.items()
}
EXCHANGES = {f.stem: json.loads(f.read_text()) for f in sorted((ROOT / "http").glob("*.json"))}
MESSAGES = {
    f.stem: json.loads(f.read_text())
    for f in sorted((ROOT / "ws").glob("*.json"))
    if f.stem != "schema"
}


def _validate(schema: dict[str, Any], instance: Any) -> None:
    """Validate against an OpenAPI schema whose ``#/components/...`` refs point into SPEC."""
    Draft202012Validator({**schema, "components": SPEC["components"]}).validate(instance)


def test_every_endpoint_has_one_example() -> None:
    examples = {(e["method"], e["path"]) for e in EXCHANGES.values()}
    assert examples == set(OPERATIONS)
    assert len(EXCHANGES) == len(OPERATIONS)


@pytest.mark.parametrize("name", sorted(EXCHANGES))
def test_an_http_example_matches_the_schema(name: str) -> None:
    exchange = EXCHANGES[name]
    op = OPERATIONS[(exchange["method"], exchange["path"])]
    request = exchange["request"]
    params = {p["name"]: p for p in op.get("parameters", [])}
    for where in ("path_params", "query"):
        for key, value in request[where].items():
            _validate(params[key]["schema"], value)
    body = op.get("requestBody")
    if "body" in request:
        assert body is not None
        _validate(body["content"]["application/json"]["schema"], request["body"])
    else:
        assert body is None or not body.get("required")
    if any("HTTPBearer" in s for s in op.get("security", [])):
        assert request["headers"]["Authorization"].startswith("Bearer ")
    response = exchange["response"]
    documented = op["responses"][str(response["status"])]
    if "application/x-ndjson" in documented["content"]:
        # A stream of match records: each line against their JSON Schema.
        for line in response["body"]:
            Draft202012Validator(RECORD_SCHEMA).validate(line)
        return
    _validate(documented["content"]["application/json"]["schema"], response["body"])


def test_every_ws_message_type_has_an_example() -> None:
    assert set(MESSAGES) == set(MESSAGE_MODELS)


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_a_ws_example_matches_its_model_and_the_schema(kind: str) -> None:
    example = MESSAGES[kind]
    message = example["message"]
    assert message["type"] == kind
    MESSAGE_MODELS[kind].model_validate(message)
    adapter = CLIENT_MESSAGES if example["direction"] == "client_to_server" else SERVER_MESSAGES
    adapter.validate_python(message)
    Draft202012Validator(ws_schema()[example["direction"]]).validate(message)


def test_the_exported_ws_schema_is_current() -> None:
    assert json.loads((ROOT / "ws" / "schema.json").read_text()) == ws_schema()
