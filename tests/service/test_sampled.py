"""``Sampled``: a count read at most once per ``max_age``, behind the caller that finds it old."""

from __future__ import annotations

import asyncio

import pytest

from app.service.sampled import Sampled


class Counter:
    """A count whose reads are counted; ``fail`` makes the next reads raise."""

    def __init__(self) -> None:
        self.value = 0
        self.reads = 0
        self.fail = False
        self.gate = asyncio.Event()
        self.gate.set()

    async def read(self) -> int:
        self.reads += 1
        await self.gate.wait()
        if self.fail:
            raise ConnectionError("database gone")
        return self.value


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_stale_figure_is_answered_and_refreshed_behind_it() -> None:
    counter, clock = Counter(), Clock()
    sampled = Sampled(counter.read, 10.0, clock)
    counter.value = 3
    assert await sampled.get() == 3  # the first get waits for the count
    counter.value = 4
    clock.now += 9.9
    assert [await sampled.get() for _ in range(5)] == [3] * 5
    assert counter.reads == 1
    clock.now += 0.1
    assert await sampled.get() == 3  # older than max_age: answered, refresh started
    assert await sampled.get() == 3  # one refresh at a time, not one per get
    await settle()
    assert counter.reads == 2
    assert await sampled.get() == 4


async def test_concurrent_first_gets_share_one_count() -> None:
    counter = Counter()
    counter.value = 7
    counter.gate.clear()
    sampled = Sampled(counter.read, 10.0)
    waiting = [asyncio.create_task(sampled.get()) for _ in range(10)]
    await settle()
    counter.gate.set()
    assert await asyncio.gather(*waiting) == [7] * 10
    assert counter.reads == 1


async def test_a_failed_refresh_keeps_the_last_figure_and_is_retried() -> None:
    counter, clock = Counter(), Clock()
    sampled = Sampled(counter.read, 1.0, clock)
    counter.value = 2
    assert await sampled.get() == 2
    counter.fail, counter.value = True, 5
    clock.now += 1
    assert await sampled.get() == 2
    await settle()
    assert counter.reads == 2
    assert await sampled.get() == 2  # still stale: the next get tries again
    await settle()
    assert counter.reads == 3
    counter.fail = False
    assert await sampled.get() == 2
    await settle()
    assert await sampled.get() == 5
    await sampled.close()


async def test_a_failed_first_count_raises_and_max_age_zero_counts_every_time() -> None:
    counter = Counter()
    counter.fail = True
    sampled = Sampled(counter.read, 0.0)
    with pytest.raises(ConnectionError):
        await sampled.get()
    counter.fail = False
    for n in range(3):
        counter.value = n
        assert await sampled.get() == n
    assert counter.reads == 4
