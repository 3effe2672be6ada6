"""Tournaments over HTTP: create one, enter bots, wait for its end, recompute its standings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.api.helpers import JSON, Player
from tests.waiting import until

ROOT = Path(__file__).resolve().parents[2]
# Short matches: a target one or two hands reach.
SHORT = {"target": 10}


async def create(client: httpx.AsyncClient, organiser: Player, **body: Any) -> JSON:
    r = await client.post("/v1/tournaments", json=body, headers=organiser.auth)
    assert r.status_code == 201, r.text
    created: JSON = r.json()
    return created


async def enter_bots(
    client: httpx.AsyncClient, organiser: Player, tournament_id: str, levels: list[str]
) -> JSON:
    view: JSON = {}
    for level in levels:
        r = await client.post(
            f"/v1/tournaments/{tournament_id}/bots", json={"level": level}, headers=organiser.auth
        )
        assert r.status_code == 200, r.text
        view = r.json()
    return view


async def view(client: httpx.AsyncClient, tournament_id: str) -> JSON:
    r = await client.get(f"/v1/tournaments/{tournament_id}")
    assert r.status_code == 200, r.text
    got: JSON = r.json()
    return got


async def finished(client: httpx.AsyncClient, tournament_id: str, timeout: float = 180) -> JSON:
    async def done() -> JSON | None:
        got = await view(client, tournament_id)
        return got if got["status"] == "finished" else None

    result: JSON = await until(done, timeout=timeout, what="the tournament's end", every=0.2)
    return result


def recompute(export: JSON, tmp_path: Path) -> list[JSON]:
    """The standings ``python -m app.table.standings --json`` prints for ``export``."""
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    out = subprocess.run(
        [sys.executable, "-m", "app.table.standings", "--json", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    rows: list[JSON] = json.loads(out.stdout)
    return rows


def pairs_of(tournament: JSON) -> list[frozenset[str]]:
    return [
        frozenset((p["seat0"], p["seat1"]))
        for r in tournament["rounds"]
        for p in r["pairings"]
        if p["seat1"] is not None
    ]
