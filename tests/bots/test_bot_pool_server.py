"""Bot decisions in worker processes on a real server: the loop stays free while LUNA thinks,
and a queue of decisions lowers the budget of each."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.bots.search import Budget
from app.engine import Action, apply, legal_actions, make_ruleset, new_match
from app.engine.views import seat_view
from app.service.workers.bot_pool import BotPool
from app.service.workers.bots import BotRunner
from tests.api.conftest import start_server
from tests.api.helpers import choose, get_table
from tests.bots.test_bots_server import bot_moves, bot_table, log


@pytest.fixture
def sqlite_url(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite+aiosqlite:///{tmp_path / 'pool.db'}"


async def test_the_server_answers_while_a_bot_searches(sqlite_url: str) -> None:
    # Each of LUNA's searches runs into its 2 s wall cap; a search on the event loop would hold
    # every request that long.
    server = start_server(sqlite_url, bot_search_playouts=10**7, bot_search_cap_ms=2000.0)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            # A match to 30 can end in the first hand, before the bot has decided four times.
            tid, human = await bot_table(http, "hard", target=500)
            app = server.uvicorn.config.app
            assert isinstance(app, FastAPI)
            runner: BotRunner = app.state.bots
            slowest = 0.0
            deadline = time.monotonic() + 60
            # Until the bot has made a few searched decisions, the person's reads stay quick.
            while runner.pool.decisions < 4 and time.monotonic() < deadline:
                start = time.monotonic()
                view = await get_table(http, tid, human)
                slowest = max(slowest, time.monotonic() - start)
                if set(view["game"]["legal"]["actions"]) - {"resign"}:
                    path, body = choose(view)
                    r = await http.post(f"/v1/tables/{tid}/{path}", json=body, headers=human.auth)
                    assert r.status_code == 200, r.text
                await asyncio.sleep(0.05)
            assert runner.pool.decisions >= 4
            assert slowest < 1.5, slowest
            assert bot_moves(await log(http, tid))
    finally:
        server.stop()


def _views(n: int) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """``n`` positions where a seat has a searched choice (a discard), with its events."""
    out = []
    for i in range(n):
        state, events = new_match(make_ruleset("standard"), f"pool-{i}")
        seen = [[e.for_recipient(s) for e in events] for s in (0, 1)]
        # Both pass the upcard; the first to draw takes the stock and is to discard.
        while state.hand.phase != "discard":
            seat = state.hand.turn
            kinds = {a.kind for a in legal_actions(state, seat)}
            state, events = apply(state, seat, Action("pass" if "pass" in kinds else "draw_stock"))
            for s in (0, 1):
                seen[s] += [e.for_recipient(s) for e in events]
        seat = state.hand.turn
        out.append((seat_view(state, seat), seen[seat]))
    return out


async def test_queued_decisions_get_a_lowered_budget() -> None:
    pool = BotPool(1, Budget(400, 10_000.0))
    try:
        first = await pool.choose("hard", *_views(1)[0])  # the worker is up
        assert first["kind"] in ("discard", "knock")
        assert pool.lowered == 0
        views = _views(6)
        answers = await asyncio.gather(*(pool.choose("hard", v, e) for v, e in views))
        assert len(answers) == 6 and all(a["kind"] in ("discard", "knock") for a in answers)
        # The first found the worker free; each later one shared it with those before it.
        assert pool.lowered == 5
        assert pool.budget_now() == pool.budget  # nothing pending any more
    finally:
        pool.close()
