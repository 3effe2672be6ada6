"""The bus's Redis connection alone: CPU per message through redis-py and through ``Link``.

    python benchmarks/redis_link.py [--messages 2000] [--batch 1 4] [--redis redis://...]

Publishes ``--messages`` bus-sized messages (~2 KB, as a commit with its table) on a channel of
its own, ``--batch`` at a time, and receives them on a subscriber, once with redis-py's client
(the publisher's pipeline and ``PubSub.get_message``, as ``RedisBus`` used them) and once with
``app.bus.redis_link.Link`` (packed commands written without waiting; every reply of a read
parsed in one callback). The publisher runs in a child process, so each side's CPU time
(``time.process_time``) is its own. Prints one line per configuration, then one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import orjson
import uvloop
from redis.asyncio import Redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.bus.redis_link import Link, Reply, connect, pack  # noqa: E402


def messages(count: int) -> list[bytes]:
    """Bus-sized messages, each unlike the others."""
    table = {"hands": [["7H", "8H", "9H", "KS"] * 3] * 2, "stock": ["AC", "2D"] * 300}
    return [orjson.dumps({"o": "bench", "n": i, "a": table}) for i in range(count)]


async def publish(kind: str, url: str, channel: str, count: int, batch: int) -> float:
    """Publish; CPU microseconds per message."""
    data = messages(count)
    cpu = time.process_time()
    if kind == "redis-py":
        redis = Redis.from_url(url)
        for start in range(0, count, batch):
            async with redis.pipeline(transaction=False) as pipe:
                for raw in data[start : start + batch]:
                    pipe.publish(channel, raw)
                await pipe.execute()
        await redis.aclose()
    else:
        answered = 0
        done = asyncio.Event()

        def on_reply(reply: Reply) -> None:
            nonlocal answered
            answered += 1
            if answered == count:
                done.set()

        link = await connect(url, on_reply, 2.0)
        for start in range(0, count, batch):
            link.write(
                b"".join(pack(b"PUBLISH", channel, raw) for raw in data[start : start + batch])
            )
            await asyncio.sleep(0)  # the bus writes once per pass of the event loop
        await done.wait()
        link.close()
    return (time.process_time() - cpu) * 1e6 / count


async def subscribe(kind: str, url: str, batch: int, count: int) -> tuple[float, float]:
    """Receive ``count`` messages published by a child process: (subscriber's, publisher's)
    CPU microseconds per message."""
    channel = f"bench-link-{uuid.uuid4().hex}"
    received = 0
    first: float | None = None
    publisher = [sys.executable, __file__, "--publish", kind, channel, str(count), str(batch)]
    if kind == "redis-py":
        redis = Redis.from_url(url)
        pubsub = redis.pubsub()
        await pubsub.subscribe(channel)
        await pubsub.get_message(timeout=1.0)
        child = subprocess.Popen([*publisher, url], stdout=subprocess.PIPE)
        while received < count:
            message = await pubsub.get_message(timeout=1.0)
            if message is not None and message["type"] == "message":
                first = first or time.process_time()
                received += 1
        cpu = time.process_time() - (first or 0.0)
        await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
        await redis.aclose()
    else:
        subscribed = asyncio.Event()
        done = asyncio.Event()

        def on_reply(reply: Reply) -> None:
            nonlocal received, first
            if reply[0] == b"subscribe":
                subscribed.set()
            elif reply[0] == b"message":
                first = first or time.process_time()
                received += 1
                if received == count:
                    done.set()

        link: Link = await connect(url, on_reply, 2.0)
        link.send(b"SUBSCRIBE", channel)
        await subscribed.wait()
        child = subprocess.Popen([*publisher, url], stdout=subprocess.PIPE)
        await done.wait()
        cpu = time.process_time() - (first or 0.0)
        link.close()
    out, _ = child.communicate(timeout=60)
    # The first message's arrival starts the clock: one message fewer is timed.
    return cpu * 1e6 / max(1, count - 1), float(out)


def main() -> None:
    if sys.argv[1:2] == ["--publish"]:
        kind, channel, count, batch, url = sys.argv[2:7]
        print(uvloop.run(publish(kind, url, channel, int(count), int(batch))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    results = []
    for batch in args.batch:
        for kind in ("redis-py", "link"):
            sub, pub = uvloop.run(subscribe(kind, args.redis, batch, args.messages))
            results.append({"client": kind, "batch": batch, "publish_us": pub, "receive_us": sub})
            print(
                f"{kind:<9} {batch} per write: publish {pub:6.1f} us, receive {sub:6.1f} us "
                "of CPU per message"
            )
    print(json.dumps({"benchmark": "redis_link", "messages": args.messages, "runs": results}))


if __name__ == "__main__":
    main()
