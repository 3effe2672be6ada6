"""The web client's types are generated from the server's schemas and must not drift.

After an API change: ``make web-types`` rewrites ``web/schema/`` and ``web/src/generated/``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from scripts.web_schemas import SCHEMA_DIR, dumps, openapi_schema, ws_messages_schema

WEB = SCHEMA_DIR.parent
HINT = "the server's schemas changed: run `make web-types` and commit the result"


def test_the_committed_schemas_are_the_servers() -> None:
    assert (SCHEMA_DIR / "openapi.json").read_text() == dumps(openapi_schema()), HINT
    assert (SCHEMA_DIR / "ws.json").read_text() == dumps(ws_messages_schema()), HINT


def test_the_committed_types_are_generated_from_the_committed_schemas(tmp_path: Path) -> None:
    bin_dir = WEB / "node_modules" / ".bin"
    assert (bin_dir / "openapi-typescript").exists(), "run `make test` (npm ci in web/)"
    api, ws = tmp_path / "api.ts", tmp_path / "ws.ts"
    subprocess.run(
        # As package.json's `types` script: enums also as arrays (the deck designs' list).
        [bin_dir / "openapi-typescript", "schema/openapi.json", "--enum-values", "-o", api],
        cwd=WEB,
        check=True,
        capture_output=True,
    )
    subprocess.run([bin_dir / "json2ts", "-i", "schema/ws.json", "-o", ws], cwd=WEB, check=True)
    assert api.read_text() == (WEB / "src" / "generated" / "api.ts").read_text(), HINT
    assert ws.read_text() == (WEB / "src" / "generated" / "ws.ts").read_text(), HINT
