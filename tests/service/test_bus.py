"""The Redis bus between processes (two ``RedisBus`` on one ``redis-server`` of this test's own),
and its health as Redis stops and starts again."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis

from app.bus.hub import Notification, Subscription
from app.bus.message import Sent
from app.bus.redis import RedisBus
from app.engine import Event
from app.table.model import StoredEvent
from tests.api.conftest import _free_port
from tests.cluster.conftest import RedisServer
from tests.waiting import until

# The event types the bus carries across tables (the workers' in the server: ``app.main``).
WATCHED = frozenset({"bot_seated", "match_started"})


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer(_free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def buses(redis: RedisServer) -> AsyncIterator[tuple[RedisBus, RedisBus]]:
    prefix = f"test-{uuid.uuid4().hex}"
    one, two = (RedisBus(redis.url, prefix, retry=0.1, watched=WATCHED) for _ in range(2))
    await one.start()
    await two.start()
    yield one, two
    await one.stop()
    await two.stop()


def chat(seq: int, table_id: str = "t1") -> StoredEvent:
    return StoredEvent(table_id, seq, 1, None, Event("chat", {"text": f"line {seq}"}, {0: {}}))


async def received(sub: Subscription[StoredEvent], n: int) -> list[StoredEvent]:
    async with asyncio.timeout(10):
        return [item for _ in range(n) if (item := await sub.get()) is not None]


async def test_a_commit_reaches_the_other_process_in_order_and_this_one_once(
    buses: tuple[RedisBus, RedisBus],
) -> None:
    one, two = buses
    assert one.health() is None and two.health() is None
    here, there, other = one.table("t1"), two.table("t1"), two.table("t2")
    note = Notification("p1", "your_turn", "t1", {"hand_number": 1, "phase": "draw"})
    notes = two.player("p1")
    await two.subscribed()
    stale_here: list[tuple[str, Sent | None]] = []
    stale_there: list[tuple[str, Sent | None]] = []
    one.on_remote(lambda table_id, sent: stale_here.append((table_id, sent)))
    two.on_remote(lambda table_id, sent: stale_there.append((table_id, sent)))
    for seq in range(2, 12):
        one.deliver([chat(seq)], [note] if seq == 11 else [])
    assert [s.seq for s in await received(there, 10)] == list(range(2, 12))
    assert (await notes.get()) == note
    assert [s.seq for s in await received(here, 10)] == list(range(2, 12))
    await asyncio.sleep(0.2)
    assert here.get_nowait() is None  # its own message came back from Redis: not twice
    assert other.get_nowait() is None and there.get_nowait() is None
    # The other process listens to the table: each commit reaches its cache (these commits
    # carry no table: it drops its copy); this one's is not told.
    assert stale_there == [("t1", None)] * 10 and stale_here == []


def counted(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


def foreign() -> float:
    return counted("ginrummy_bus_foreign_messages_total")


async def numsub(redis: RedisServer, *channels: str) -> dict[str, int]:
    """How many connections Redis has subscribed to each channel."""
    client = Redis.from_url(redis.url)
    try:
        pairs = await client.pubsub_numsub(*channels)
    finally:
        await client.aclose()
    return {name.decode() if isinstance(name, bytes) else name: count for name, count in pairs}


async def test_a_process_receives_only_what_it_listens_to(
    redis: RedisServer, buses: tuple[RedisBus, RedisBus]
) -> None:
    """Another process's commit reaches this one only for a table with a subscriber here, an
    event type a worker watches, or a player with a socket here: Redis sends it nothing else
    (nothing foreign counted, the other channels have one subscriber: the committing process's
    own listener, or none)."""
    one, two = buses
    watched, there, notes = two.tables(["bot_seated"]), two.table("t1"), two.player("p1")
    await two.subscribed()
    before, received_before = foreign(), counted("ginrummy_bus_received_total")
    one.deliver([chat(2, "t2")], [Notification("p9", "your_turn", "t2", {})])
    one.deliver([StoredEvent("t4", 1, 1, None, Event("bot_seated", {"seat": 1}))], [])
    one.deliver([chat(3, "t5")], [Notification("p1", "your_turn", "t5", {})])
    one.deliver([chat(4, "t1")], [])
    assert [s.seq for s in await received(there, 1)] == [4]  # the last: all were handled
    seated = await watched.get()
    assert seated is not None and (seated.table_id, seated.event.type) == ("t4", "bot_seated")
    assert watched.get_nowait() is None  # a chat is not a type it watches
    assert (await notes.get()) == Notification("p1", "your_turn", "t5", {})
    # The type's, the player's and the table's message: nothing about t2, t4, t5 or p9.
    assert counted("ginrummy_bus_received_total") - received_before == 3
    assert foreign() == before
    prefix = one.channel.removesuffix(":bus")
    assert await numsub(
        redis, f"{prefix}:table:t1", f"{prefix}:table:t2", f"{prefix}:player:p1"
    ) == {f"{prefix}:table:t1": 1, f"{prefix}:table:t2": 0, f"{prefix}:player:p1": 1}
    with pytest.raises(ValueError, match="match_over"):
        two.tables(["match_over"])  # not carried: a watcher of it would hear nothing


async def test_the_last_subscription_closed_leaves_the_channel(
    redis: RedisServer, buses: tuple[RedisBus, RedisBus]
) -> None:
    """Two subscriptions to a table share its channel; with the last one closed the process
    leaves it, and what is committed there afterwards is not even sent to it."""
    one, two = buses
    prefix = one.channel.removesuffix(":bus")
    channel = f"{prefix}:table:t1"
    first, second = two.table("t1"), two.table("t1")
    await two.subscribed()
    assert await numsub(redis, channel) == {channel: 1}
    first.close()
    await two.subscribed()
    assert await numsub(redis, channel) == {channel: 1}
    one.deliver([chat(2)], [])
    assert [s.seq for s in await received(second, 1)] == [2]
    second.close()
    await until(lambda: not two._leaving)  # Redis answered the UNSUBSCRIBE
    assert await numsub(redis, channel) == {channel: 0}
    before = counted("ginrummy_bus_received_total")
    one.deliver([chat(3)], [])
    await asyncio.sleep(0.2)
    assert counted("ginrummy_bus_received_total") == before


async def test_subscribed_waits_for_redis_then_nothing_committed_is_missed(
    buses: tuple[RedisBus, RedisBus],
) -> None:
    """A subscription made and awaited (``subscribed``) hears the very next commit of another
    process, however quickly it follows: Redis took the subscription first."""
    one, two = buses
    for n in range(50):
        table_id = f"quick{n}"
        sub = two.table(table_id)
        await two.subscribed()
        one.deliver([chat(2, table_id)], [])
        assert [s.seq for s in await received(sub, 1)] == [2]
        sub.close()


async def test_redis_down_is_degraded_then_ok_again_on_its_own(
    redis: RedisServer, buses: tuple[RedisBus, RedisBus]
) -> None:
    one, two = buses
    epoch = two.epoch
    here, there = one.table("t1"), two.table("t1")
    await two.subscribed()
    redis.stop()
    await until(lambda: one.health() is not None and two.health() is not None)
    assert "redis" in (two.health() or "")
    # Commits go on: this process's listeners still hear them at once.
    one.deliver([chat(2)], [])
    assert [s.seq for s in await received(here, 1)] == [2]
    redis.start()
    await until(lambda: one.health() is None and two.health() is None)
    assert two.epoch > epoch  # listeners read the log once: what was dropped is there
    one.deliver([chat(3)], [])
    assert [s.seq for s in await received(there, 1)] == [3]


async def test_a_process_back_on_the_bus_makes_the_others_read_the_log_once(
    buses: tuple[RedisBus, RedisBus],
) -> None:
    """What a process committed while it could not publish was dropped, and another process
    that reconnected first may have stopped polling already: the one coming back says so, and
    every other process starts a new epoch (its listeners read the log once)."""
    one, two = buses
    before_one, before_two = one.epoch, two.epoch
    two._down("redis: gone for a moment")
    two._up()  # as its listener does when it subscribes again
    await until(lambda: one.epoch > before_one)
    assert two.epoch == before_two + 1  # its own hello comes back and is skipped
    await asyncio.sleep(0.2)
    assert two.epoch == before_two + 1


async def test_a_lost_publishing_connection_comes_back_and_says_hello(
    redis: RedisServer, buses: tuple[RedisBus, RedisBus]
) -> None:
    """Commits written on a connection that broke may never have reached Redis: once the
    publisher is connected again, the others read the log once (a new epoch), and the bus
    carries commits again; the subscriptions never broke, so nobody was degraded."""
    one, two = buses
    before_one, before_two = one.epoch, two.epoch
    there = two.table("t1")
    await two.subscribed()
    client = Redis.from_url(redis.url)
    try:
        # The publishers are the only plain clients (the subscribers are ``pubsub`` ones).
        assert await client.client_kill_filter(_type="normal", skipme=True) == 2
    finally:
        await client.aclose()
    await until(lambda: one.epoch > before_one and two.epoch > before_two)
    assert one.health() is None and two.health() is None
    one.deliver([chat(2)], [])
    assert [s.seq for s in await received(there, 1)] == [2]


async def test_a_message_it_cannot_read_is_skipped_and_the_bus_goes_on(
    redis: RedisServer, buses: tuple[RedisBus, RedisBus]
) -> None:
    one, two = buses
    there = two.table("t1")
    await two.subscribed()
    client = Redis.from_url(redis.url)
    try:
        channel = two.channel.removesuffix(":bus") + ":table:t1"
        assert await client.publish(channel, b'{"o": "another release", "e": [[1]]}') == 1
    finally:
        await client.aclose()
    one.deliver([chat(2)], [])
    assert [s.seq for s in await received(there, 1)] == [2]
    assert two.health() is None
    assert not two._outage  # the subscription was never dropped for it


async def test_a_redis_with_a_password() -> None:
    """The bus authenticates with the URL's password; a wrong one, or none, is a degraded bus
    that says why."""
    server = RedisServer(_free_port(), password="s3cret")
    server.start()
    prefix = f"test-{uuid.uuid4().hex}"
    one, two = RedisBus(server.url, prefix), RedisBus(server.url, prefix)
    wrong = RedisBus(server.url.replace("s3cret", "wrong"), prefix)
    anonymous = RedisBus(server.url.replace(":s3cret@", ""), prefix)
    try:
        await one.start()
        await two.start()
        await wrong.start()
        await anonymous.start()
        there = two.table("t1")
        await two.subscribed()
        one.deliver([chat(2)], [])
        assert [s.seq for s in await received(there, 1)] == [2]
        assert "password" in (wrong.health() or "")
        assert "NOAUTH" in (anonymous.health() or "")
    finally:
        for bus in (one, two, wrong, anonymous):
            await bus.stop()
        server.stop()


async def test_a_publishing_connection_that_stops_answering_is_replaced(
    redis: RedisServer, buses: tuple[RedisBus, RedisBus], caplog: pytest.LogCaptureFixture
) -> None:
    """A connection that dies without closing would swallow every commit unseen: a PUBLISH
    unanswered for a whole ``PING_AFTER`` ends it, and the new one says hello."""
    one, two = buses
    before = two.epoch
    there = two.table("t1")
    await two.subscribed()
    client = Redis.from_url(redis.url)
    try:
        # Redis holds every PUBLISH unanswered; the subscriptions' pings still get answers.
        await client.client_pause(4000, all=False)  # WRITE: PUBLISH waits
        one.deliver([chat(2)], [])
        await until(lambda: "no answer to PUBLISH" in caplog.text, timeout=5)
    finally:
        await client.client_unpause()
        await client.aclose()
    await until(lambda: two.epoch > before)
    one.deliver([chat(3)], [])
    async with asyncio.timeout(10):
        while (item := await there.get()) is not None and item.seq != 3:
            pass
    assert item is not None and item.seq == 3
    assert one.health() is None and two.health() is None
