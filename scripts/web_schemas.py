"""Write the schemas the web client's types are generated from (``web/schema/``).

    python -m scripts.web_schemas && (cd clients/typescript && npm run types)

``openapi.json`` is the server's OpenAPI document and ``ws.json`` the WebSocket messages (one
``$defs`` with ``ServerMessage`` and ``ClientMessage``), both without their examples, which
shape no type. The sockets' AsyncAPI document, as ``/asyncapi.json`` serves it, is written to
``docs/schemas/asyncapi.json``, and rendered as ``docs/sockets.md`` (``tests/api/test_asyncapi.py``
checks both).
``tests/web/test_types.py`` fails when either of the first two, or the TypeScript generated from
them (``clients/typescript/src/generated/``, the web client's too), no longer matches the server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic.json_schema import models_json_schema

from app.api.live.asyncapi import asyncapi
from app.api.live.messages import MESSAGE_MODELS, MoveMessage, PingMessage
from app.main import create_app
from scripts.asyncapi_docs import render

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "web" / "schema"
ASYNCAPI_FILE = ROOT / "docs" / "schemas" / "asyncapi.json"
SOCKETS_DOC = ROOT / "docs" / "sockets.md"


def _without_examples(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_examples(v) for k, v in value.items() if k not in ("example", "examples")
        }
    if isinstance(value, list):
        return [_without_examples(v) for v in value]
    return value


def openapi_schema() -> dict[str, Any]:
    """The OpenAPI document of ``create_app()``, examples left out."""
    result: dict[str, Any] = _without_examples(create_app().openapi())
    return result


def ws_messages_schema() -> dict[str, Any]:
    """Every WebSocket message model in one ``$defs``, with the two directions as unions."""
    models = list(MESSAGE_MODELS.values())
    _, top = models_json_schema([(m, "serialization") for m in models])
    defs = top["$defs"]
    client = {MoveMessage.__name__, PingMessage.__name__}
    names = [m.__name__ for m in models]
    defs["ServerMessage"] = {"oneOf": [{"$ref": f"#/$defs/{n}"} for n in names if n not in client]}
    defs["ClientMessage"] = {"oneOf": [{"$ref": f"#/$defs/{n}"} for n in sorted(client)]}
    schema = {
        "title": "WsMessages",
        "type": "object",
        "properties": {
            "server": {"$ref": "#/$defs/ServerMessage"},
            "client": {"$ref": "#/$defs/ClientMessage"},
        },
        "$defs": defs,
    }
    result: dict[str, Any] = _without_examples(schema)
    return result


def dumps(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, sort_keys=True) + "\n"


def main() -> None:
    SCHEMA_DIR.mkdir(parents=True, exist_ok=True)
    (SCHEMA_DIR / "openapi.json").write_text(dumps(openapi_schema()))
    (SCHEMA_DIR / "ws.json").write_text(dumps(ws_messages_schema()))
    ASYNCAPI_FILE.write_text(dumps(asyncapi()))
    SOCKETS_DOC.write_text(render(asyncapi()))


if __name__ == "__main__":
    main()
