"""The README's first game, run as written (but for HOST and PORT) against a real server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.api.conftest import Server, sqlite_only

README = Path(__file__).resolve().parents[2] / "README.md"


def _first_game() -> str:
    text = README.read_text()
    section = text[text.index("## A first game") :]
    block = section[section.index("```sh\n") + len("```sh\n") :]
    return block[: block.index("```")]


def run_first_game(url: str) -> dict[str, Any]:
    """The README's first game against the server at ``url`` (tests/deploy runs it against the
    container): what its last line prints, checked to be the player's hand and legal moves."""
    script = _first_game()
    assert "export HOST=" in script
    # The server under test listens elsewhere: HOST and PORT come from the environment.
    lines = [line for line in script.splitlines() if not line.startswith("export HOST=")]
    where = urlsplit(url)
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", "\n".join(lines)],
        env={**os.environ, "HOST": str(where.hostname), "PORT": str(where.port)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    game: dict[str, Any] = json.loads(run.stdout)
    assert len(game["hand"]["cards"]) in (10, 11)
    assert game["legal"]["actions"] is not None
    return game


@sqlite_only
def test_the_readme_first_game_runs(server: Server) -> None:
    run_first_game(server.url)
