"""``RateLimits`` on the real Redis: two instances (two processes' worth) hold one limit, large
limits are counted in batches within their documented margin, and a refused key stays
refused."""

from __future__ import annotations

import itertools
import uuid

import pytest

from app.errors import RateLimitedError
from app.service.rate_limits import BATCH_DIVISOR, RateLimits
from app.settings import Settings

REDIS = "redis://127.0.0.1:6379/0"


def _limits(prefix: str, token: str) -> RateLimits:
    return RateLimits.from_settings(
        Settings(redis_url=REDIS, redis_prefix=prefix, rate_limit_token=token)
    )


async def _allowed(processes: list[RateLimits], key: str, attempts: int) -> list[bool]:
    outcomes = []
    for limits in itertools.islice(itertools.cycle(processes), attempts):
        try:
            await limits.hit("token", key)
        except RateLimitedError as exc:
            assert exc.code == "rate_limited"
            assert 0 <= exc.retry_after <= 3600
            outcomes.append(False)
        else:
            outcomes.append(True)
    return outcomes


async def test_a_small_limit_is_exact_across_two_processes() -> None:
    prefix = f"test-{uuid.uuid4().hex}"
    processes = [_limits(prefix, "7/hour"), _limits(prefix, "7/hour")]
    try:
        assert await _allowed(processes, "ada", 10) == [True] * 7 + [False] * 3
        assert await _allowed(processes, "bo", 1) == [True]  # another key, its own budget
    finally:
        for limits in processes:
            await limits.close()


async def test_a_large_limit_is_counted_in_batches_within_one_batch_per_process() -> None:
    prefix = f"test-{uuid.uuid4().hex}"
    limit = 2000
    batch = limit // BATCH_DIVISOR
    processes = [_limits(prefix, f"{limit}/hour"), _limits(prefix, f"{limit}/hour")]
    try:
        outcomes = await _allowed(processes, "ada", limit + 4 * batch)
        allowed = outcomes.index(False)
        assert limit - 2 * batch <= allowed <= limit + 2 * batch
        # Once one process refuses, the other learns it at its next batch at the latest; then
        # both refuse every hit (counted one by one), with no batch slipping through.
        assert sum(outcomes[allowed:]) < batch
        assert not any(outcomes[-2 * batch :])
    finally:
        for limits in processes:
            await limits.close()


@pytest.mark.parametrize("notation", ["", "  "])
async def test_an_empty_limit_is_off(notation: str) -> None:
    limits = _limits(f"test-{uuid.uuid4().hex}", notation)
    try:
        assert not limits.enabled("token")
        assert all(await _allowed([limits], "ada", 50))
    finally:
        await limits.close()
