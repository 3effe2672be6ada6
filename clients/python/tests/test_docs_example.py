"""docs/sdk.md's 20-line bot, exactly as printed, in a fresh virtual environment where
``pip install ./clients/python`` (here with uv, which is quicker) is all that was installed."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.api.conftest import Server

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "sdk.md"
UV = Path(sys.executable).parent / "uv"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.DOTALL)


def test_the_guides_bot_plays_a_match_from_a_fresh_install(
    sdk_server: Server, tmp_path: Path
) -> None:
    bot = python_blocks(GUIDE.read_text())[0]
    assert len(bot.strip().splitlines()) <= 20
    (tmp_path / "bot.py").write_text(bot)
    venv = tmp_path / "venv"
    subprocess.run([UV, "venv", "-q", "--python", sys.executable, venv], check=True)
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    subprocess.run(
        [UV, "pip", "install", "-q", ROOT / "clients" / "python"], env=env, check=True, timeout=300
    )
    python = venv / "bin" / "python"
    clean = {**os.environ, "GINRUMMY_SERVER": sdk_server.url, "PYTHONPATH": ""}
    # Nothing of the server's is importable there: only the SDK and what it depends on.
    server_code: list[str | Path] = [python, "-c", "import app"]
    imported = subprocess.run(
        server_code, cwd=tmp_path, env=clean, capture_output=True, check=False
    )
    assert imported.returncode == 1
    done = subprocess.run(
        [python, "bot.py"],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [match] = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert match["match_number"] == 1 and match["winner"] in (0, 1) and match["seat"] == 0
    assert max(match["final_scores"]) >= 30
