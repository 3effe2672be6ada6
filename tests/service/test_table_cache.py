"""Each process's table cache follows the other processes' commits over the bus, and never
decides on a stale table: two ``TableService`` on one SQLite file, each with its own
``RedisBus`` on a ``redis-server`` of this test's own (two processes as far as the pipeline
can tell: nothing but the database and Redis is shared)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from app.bus.message import Sent
from app.bus.redis import RedisBus
from app.engine import Action, legal_actions
from app.errors import ConflictError
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.settings import Settings
from app.store import Database, run_migrations
from app.table.commands import Actor, Join, Play, Start
from app.table.model import Committed, StoredEvent
from tests.api.conftest import _free_port
from tests.cluster.conftest import RedisServer
from tests.service.test_bus import received

REASONS = ("uncached", "stale", "refusal")


def loads() -> dict[str, float]:
    """How many commands loaded their table from the database so far, by reason."""
    return {
        r: REGISTRY.get_sample_value("ginrummy_table_loads_total", {"reason": r}) or 0.0
        for r in REASONS
    }


def loads_since(before: dict[str, float]) -> dict[str, float]:
    now = loads()
    return {r: now[r] - before[r] for r in REASONS if now[r] != before[r]}


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer(_free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def processes(tmp_path: Path, redis: RedisServer) -> AsyncIterator[list[TableService]]:
    """Two pipelines on one database file, each with its own database pool and bus."""
    prefix = f"test-{uuid.uuid4().hex}"
    url = f"sqlite+aiosqlite:///{tmp_path / 'two.db'}"
    services: list[TableService] = []
    for _ in range(2):
        db = Database(url)
        if not services:
            await run_migrations(db)
        bus = RedisBus(redis.url, prefix, retry=0.1)
        await bus.start()
        limits = RateLimits.from_settings(Settings(redis_url=None))
        services.append(TableService(db, bus, limits))
    yield services
    for service in services:
        await service.hub.stop()
        await service.db.close()


class Table:
    """One table whose two players move through either process."""

    def __init__(self, services: list[TableService], table_id: str, players: list[Actor]):
        self.services = services
        self.table_id = table_id
        self.players = players
        # Every process hears every commit of the table (its own at once, others' over Redis).
        self.heard = [s.hub.table(table_id) for s in services]
        self.seq = 1  # table_created, before the subscriptions

    async def settle(self) -> list[StoredEvent]:
        """Wait until both processes heard every commit so far; the events of the last ones."""
        state = await self.services[0].load(self.table_id)
        last, self.seq = self.seq, state.table.last_seq
        out = []
        for heard in self.heard:
            out = await received(heard, self.seq - last)
        return out

    async def mover(self) -> tuple[Actor, Action]:
        """The player to move and a move that keeps the hand going (no knock, no resign)."""
        state = (await self.services[0].load(self.table_id)).state
        assert state is not None
        seat = state.hand.turn
        actions = [a for a in legal_actions(state, seat) if a.kind not in ("knock", "resign")]
        return self.players[seat], actions[0]


async def new_table(services: list[TableService]) -> Table:
    """Ada creates through process 0, Bo joins through process 1, Ada starts through 0."""
    one, two = services
    ada, _ = await one.create_player("Ada")
    bo, _ = await two.create_player("Bo")
    table_id = (await one.create_table(ada, "standard", {})).body["table_id"]
    table = Table(services, table_id, [ada, bo])
    for service in services:
        await service.hub.subscribed()
    await two.submit(table_id, bo, Join())
    await one.submit(table_id, ada, Start())
    await table.settle()
    return table


async def test_a_move_elsewhere_reaches_this_cache_and_the_next_move_loads_nothing(
    processes: list[TableService],
) -> None:
    table = await new_table(processes)
    before = loads()
    for n in range(8):
        service, other = processes[n % 2], processes[1 - n % 2]
        actor, action = await table.mover()
        result = await service.submit(table.table_id, actor, Play(action))
        await table.settle()
        # A read through the other process sees the move at once (reads never use a cache).
        view = await other.table_view(table.table_id, actor)
        assert view["version"] == result.body["version"]
        assert view == result.body["table"]
    # Both processes knew the table (Bo joined through one, Ada started through the other),
    # and every commit of the other process came with the table: no move loaded it.
    assert loads_since(before) == {}
    log = await processes[1].events_since(table.table_id, 0, None)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))


async def test_a_lost_bus_message_leaves_a_stale_cache_that_never_decides(
    processes: list[TableService],
) -> None:
    one, two = processes
    table = await new_table(processes)
    stale = (await two.load(table.table_id)).table.version
    await two.hub.stop()  # process two hears nothing of what process one commits now
    actor, action = await table.mover()
    moved = await one.submit(table.table_id, actor, Play(action))
    version = moved.body["version"]
    assert version == stale + 1

    # Process two still holds the table at ``stale``. A command pinned to that version is
    # refused, whatever the cache says, and nothing is written.
    before = loads()
    mover, action = await table.mover()
    with pytest.raises(ConflictError) as refused:
        await two.submit(table.table_id, mover, Play(action), expected_version=stale)
    assert refused.value.code == "stale_version"
    assert (await one.load(table.table_id)).table.version == version
    # Unpinned, the move is decided again on the table as it is (the cache's verdict, or its
    # commit, was refused by the version guard) and applies once.
    result = await two.submit(table.table_id, mover, Play(action))
    assert result.body["version"] == version + 1
    assert sum(loads_since(before).values()) >= 1
    assert result.body["table"] == await one.table_view(table.table_id, mover)
    log = await one.events_since(table.table_id, 0, None)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))


async def test_an_older_commit_arriving_late_does_not_roll_a_cache_back(
    processes: list[TableService], redis: RedisServer
) -> None:
    one, two = processes
    table = await new_table(processes)
    sent: list[Sent] = []
    two.hub.on_remote(lambda table_id, table: sent.append(table) if table else None)
    actor, action = await table.mover()
    first = await one.submit(table.table_id, actor, Play(action))
    events = await table.settle()
    actor, action = await table.mover()
    await one.submit(table.table_id, actor, Play(action))
    await table.settle()
    assert [s.order[0] for s in sent] == [first.body["version"], first.body["version"] + 1]

    # The first commit's message again, from a third process, after the second's: messages of
    # two processes may cross on the way.
    assert isinstance(one.hub, RedisBus)
    late = RedisBus(redis.url, one.hub.channel.removesuffix(":bus"), retry=0.1)
    await late.start()
    try:
        old = sent[0]
        late.deliver(events, [], Committed(old.order[0], events, old.loaded()))
        await received(table.heard[1], len(events))
    finally:
        await late.stop()
    assert len(sent) == 3 and sent[2].order == sent[0].order

    # Process two still decides on the later state: the next move loads nothing.
    before = loads()
    actor, action = await table.mover()
    result = await two.submit(table.table_id, actor, Play(action))
    assert loads_since(before) == {}
    assert result.body["table"] == await one.table_view(table.table_id, actor)


async def test_a_clocked_table_keeps_its_clock_through_the_other_process_cache(
    processes: list[TableService],
) -> None:
    """The bus carries the clock with the table: a move decided on another process's commit
    charges the right seat and sets the next deadline (a cache without the clock would leave
    the clock of the move before in the database)."""
    one, two = processes
    ada, _ = await one.create_player("Ada")
    bo, _ = await two.create_player("Bo")
    clock = {"control": "per_move", "seconds": 600.0, "policy": "claim"}
    created = await one.create_table(ada, "standard", {}, clock=clock)
    table_id = created.body["table_id"]
    table = Table(processes, table_id, [ada, bo])
    for service in processes:
        await service.hub.subscribed()
    await two.submit(table_id, bo, Join())
    await one.submit(table_id, ada, Start())
    await table.settle()
    before = loads()
    for n in range(6):
        actor, action = await table.mover()
        await processes[n % 2].submit(table_id, actor, Play(action))
        await table.settle()
        stored = await one.load(table_id)
        assert stored.state is not None and stored.clock is not None
        assert stored.clock["seat"] == stored.state.hand.turn
        view = await two.table_view(table_id, actor)
        assert view["clock"]["running"] == stored.state.hand.turn
        assert view["clock"]["deadline"] is not None
    assert loads_since(before) == {}
