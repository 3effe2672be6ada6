"""Render the sockets' AsyncAPI document (``app.api.live.asyncapi``) as Markdown:
``docs/sockets.md``, written by ``python -m scripts.web_schemas`` (``make web-types``) and
checked by ``tests/api/test_asyncapi.py``."""

from __future__ import annotations

import json
from typing import Any

JSON = dict[str, Any]
HEADER = """# The sockets, message by message

Generated from the AsyncAPI document the server serves at `/asyncapi.json`
(`python -m scripts.web_schemas`, or `make web-types`; do not edit by hand). What is sent when,
the order and contiguity guarantees and the slow-consumer rule are in
[protocol.md](protocol.md#websocket-appapilive).
"""


def _name(ref: str) -> str:
    return ref.rsplit("/", 1)[1]


def _type(schema: JSON) -> str:
    """A property's type in a few words."""
    if "$ref" in schema:
        return f"`{_name(schema['$ref'])}`"
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    return f"{kind}"


def _fields(schema: JSON) -> list[str]:
    required = set(schema.get("required", []))
    rows = ["| field | type | required | |", "|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        about = str(prop.get("description", "")).replace("\n", " ")
        rows.append(f"| `{name}` | {_type(prop)} | {'yes' if name in required else ''} | {about} |")
    return rows


def _message(document: JSON, key: str) -> list[str]:
    message = document["components"]["messages"][key]
    schema = document["components"]["schemas"][_name(message["payload"]["$ref"])]
    out = [f"### `{key}`", "", message["summary"], "", *_fields(schema), ""]
    for example in message.get("examples", []):
        payload = example["payload"]
        text = json.dumps(payload, ensure_ascii=False)
        if len(text) > 400:  # a whole table view: see TableOut in /openapi.json
            short = {k: "…" if isinstance(v, dict) else v for k, v in payload.items()}
            text = json.dumps(short, ensure_ascii=False)
        out += ["```json", text, "```", ""]
    return out


def render(document: JSON) -> str:
    lines = [HEADER]
    for name, channel in document["channels"].items():
        lines += [
            f"## `{channel['address']}` ({name} socket)",
            "",
            channel["description"].strip(),
            "",
        ]
        query = channel["bindings"]["ws"]["query"]["properties"]
        lines += ["Query parameters of the handshake:", ""]
        lines += [f"- `{k}` ({_type(v)}): {v.get('description', '')}" for k, v in query.items()]
        lines.append("")
        for action, title in (("send", "The server sends"), ("receive", "The client sends")):
            operation = document["operations"][f"{name}{action.capitalize()}"]
            keys = ", ".join(f"`{_name(m['$ref'])}`" for m in operation["messages"])
            lines += [f"{title}: {keys}.", ""]
    lines += ["## Messages", ""]
    for key in document["components"]["messages"]:
        lines += _message(document, key)
    return "\n".join(lines).rstrip() + "\n"
