"""The TypeScript SDK (clients/typescript): built and type-checked, its types the ones generated
from the server's schemas, its Node tests played against real servers (a full match through a
server restart, typed refusals), and docs/sdk.md's client compiled as printed and run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.api.conftest import Server, sqlite_only

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "typescript"
NPM = ["npm", "run", "--silent"]


def _run(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    done = subprocess.run(
        args, cwd=SDK, capture_output=True, text=True, env=env, timeout=timeout, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout


def test_the_sdk_builds_type_checks_and_has_the_generated_types() -> None:
    assert (SDK / "node_modules" / ".bin" / "tsc").exists(), "run `make test` (npm ci there)"
    _run(*NPM, "build")  # type-checks src/ as it compiles (the tests are, by `npm test`)
    assert (SDK / "dist" / "index.js").exists() and (SDK / "dist" / "index.d.ts").exists()


def test_the_sdk_plays_in_node_against_a_real_server() -> None:
    out = _run(*NPM, "test", env={**os.environ, "GINRUMMY_PYTHON": sys.executable})
    assert re.search(r"^# pass [1-9]", out, re.M) and re.search(r"^# fail 0$", out, re.M), out


RUNNER = """import { playAgainstTito } from "./example.js";

const lines: unknown[][] = [];
await playAgainstTito(process.env.GINRUMMY_SERVER ?? "", (...line: unknown[]) => lines.push(line));
console.log(JSON.stringify(lines));
"""


@sqlite_only
def test_the_guides_client_runs_as_printed(server: Server) -> None:
    block = re.findall(r"```ts\n(.*?)```", (ROOT / "docs" / "sdk.md").read_text(), re.DOTALL)
    docs = SDK / "dist-docs"
    docs.mkdir(exist_ok=True)
    (docs / "example.ts").write_text(block[0])
    (docs / "run.ts").write_text(RUNNER)
    _run(*NPM, "build")
    _run(
        "node_modules/.bin/tsc",
        *("--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"),
        *("--lib", "es2022,dom", "--types", "node", "--strict", "--skipLibCheck"),
        *("--rootDir", "dist-docs", "--outDir", "dist-docs/out"),
        *("dist-docs/example.ts", "dist-docs/run.ts"),
    )
    env = {**os.environ, "GINRUMMY_SERVER": server.url}
    out = _run("node", "--experimental-websocket", "dist-docs/out/run.js", env=env, timeout=120)
    lines = json.loads(out.strip().splitlines()[-1])
    seqs = [seq for seq, _ in lines]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert lines[-1][1] == "match_over"
