"""Without the local PostgreSQL, the suite stops at once with one clear message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_a_missing_postgresql_stops_the_run_with_one_message() -> None:
    env = {**os.environ, "GINRUMMY_TEST_POSTGRES": "postgresql://postgres@127.0.0.1:1/test"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/engine/test_cards.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert output.count("The tests need the local PostgreSQL at") == 1, output
    assert "127.0.0.1:1/test" in output
    assert "passed" not in output and "Traceback" not in output, output
