"""The clients' types are generated from the server's schemas and must not drift.

After an API change: ``make web-types`` rewrites ``web/schema/`` and the TypeScript SDK's
``clients/typescript/src/generated/``, which the web client imports too (one copy).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from scripts.web_schemas import SCHEMA_DIR, dumps, openapi_schema, ws_messages_schema

ROOT = SCHEMA_DIR.parents[1]
SDK = ROOT / "clients" / "typescript"
HINT = "the server's schemas changed: run `make web-types` and commit the result"


def test_the_committed_schemas_are_the_servers() -> None:
    assert (SCHEMA_DIR / "openapi.json").read_text() == dumps(openapi_schema()), HINT
    assert (SCHEMA_DIR / "ws.json").read_text() == dumps(ws_messages_schema()), HINT


def test_the_committed_types_are_generated_from_the_committed_schemas(tmp_path: Path) -> None:
    bin_dir = SDK / "node_modules" / ".bin"
    assert (bin_dir / "openapi-typescript").exists(), (
        "run `make test` (npm ci in clients/typescript)"
    )
    api, ws = tmp_path / "api.ts", tmp_path / "ws.ts"
    subprocess.run(
        # As the SDK's `types` script: enums also as arrays (the deck designs' list).
        [bin_dir / "openapi-typescript", SCHEMA_DIR / "openapi.json", "--enum-values", "-o", api],
        cwd=SDK,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [bin_dir / "json2ts", "-i", SCHEMA_DIR / "ws.json", "-o", ws], cwd=SDK, check=True
    )
    generated = SDK / "src" / "generated"
    assert api.read_text() == (generated / "api.ts").read_text(), HINT
    assert ws.read_text() == (generated / "ws.ts").read_text(), HINT


def test_the_web_client_has_no_copy_of_them() -> None:
    assert not (ROOT / "web" / "src" / "generated").exists()
