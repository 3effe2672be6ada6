"""Where a server's CPU goes, by layer: py-spy's raw stacks summed into one table.

    python benchmarks/layers.py PROFILE.raw [MORE.raw ...]

``benchmarks/server.py --profile DIR`` writes one raw file per server process during the
capacity phase (``py-spy record --format raw``; py-spy is installed for this only, never a
dependency of the server) and prints this table at the end. Each sample (one stack) counts
once, for one layer (``layer_of``). py-spy samples a thread while it runs or waits for a core, so
on a busy machine a frame that just made a system call weighs a little more than its CPU: read
the shares as where the time goes. A worker thread blocked waiting for work (aiosqlite's,
a thread pool's: ``WAITING``) is sampled as running by ``--nonblocking``: those samples are
left out.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

# Layers a call goes into: a sample with any frame of one of these counts for the first of
# them (in this order), whatever it called: ``dump_json`` under ``commits.commit`` is JSON, the
# engine under ``render`` is rendering.
INTO: list[tuple[str, re.Pattern[str]]] = [
    (
        "JSON (orjson calls, bus message encode/decode, response bodies)",
        re.compile(
            r"^(dump_json|loads|dumps) |^(encode|decode) \(.*app/bus/redis\.py"
            r"|^render \(.*(starlette|fastapi|app/api).*\)|/json/"
        ),
    ),
    (
        "database: loading a table (a move's reload, a socket's view, a bot's look)",
        re.compile(r"^(load_table|load) \(.*app/store/tables\.py"),
    ),
    (
        "database: the commit and every other statement (driver, pool, rows)",
        re.compile(r"sqlalchemy/|asyncpg/|aiosqlite/|sqlite3/|app/store/"),
    ),
    (
        "rendering views (view, redaction, frames)",
        re.compile(
            r"app/engine/view\.py|app/api/live/frames\.py|app/table/views\.py|app/table/notes\.py"
            r"|^(render|_response) \(.*app/service/(pipeline|queries)\.py"
        ),
    ),
    (
        "engine (deciding and applying the move)",
        re.compile(r"app/engine/|app/table/commands|app/table/clock"),
    ),
]
# The rest counts for the layer of its innermost frame that belongs to one of these, frames
# of the libraries several layers use (redis-py, asyncio) skipped: a Redis write under the
# rate limits is the limits', one under the bus is the fan-out's.
WITHIN: list[tuple[str, re.Pattern[str]]] = [
    (
        "fan-out (hub, Redis bus, table and player sockets)",
        re.compile(
            r"app/bus/hub\.py|app/bus/redis\.py|app/bus/redis_link\.py"
            r"|app/api/live/(routes|socket|session|client_in|client_out)\.py"
            r"|app/api/live/audiences\.py|app/api/live/wire\.py"
            r"|websockets/|protocols/websockets"
        ),
    ),
    ("bot runner", re.compile(r"app/service/workers/bots\.py|app/bots/")),
    (
        "rate limits (counted in batches, shared in Redis)",
        re.compile(r"app/service/rate_limits\.py|app/api/edge/ratelimit\.py|/limits/"),
    ),
    (
        "HTTP: routing, validation, middlewares, auth, logs, metrics",
        re.compile(
            r"fastapi/|starlette/|uvicorn/|pydantic|httptools|h11/|app/api/|app/main\.py"
            r"|app/logs|app/metrics|prometheus_client|app/service/tokens\.py"
        ),
    ),
]
SHARED = re.compile(r"/redis/|\(asyncio/")
PIPELINE = "pipeline (TableService.submit itself)"
OTHER = "event loop and the rest (uvloop's sockets and timers, asyncio, the collector)"
SERVICE = re.compile(r"app/service/(pipeline|queries)\.py")
ORDER = [name for name, _ in INTO] + [PIPELINE] + [name for name, _ in WITHIN] + [OTHER]


def _waiting_frames() -> set[str]:
    """The frames, as py-spy names them, of a worker thread blocked waiting for work: aiosqlite's
    connection threads and the thread pools' workers. py-spy (``--nonblocking``) counts a thread
    blocked in their queue's ``get`` as running; its samples there are left out."""
    import concurrent.futures.thread as pool  # noqa: PLC0415

    waits: list[tuple[Callable[..., Any], str, str]] = [
        (pool._worker, "work_queue.get(block=True)", "concurrent/futures/thread.py")
    ]
    try:
        import aiosqlite.core  # noqa: PLC0415
    except ImportError:
        pass
    else:
        worker = aiosqlite.core._connection_worker_thread
        waits.append((worker, "tx.get()", "aiosqlite/core.py"))
    out = set()
    for function, call, path in waits:
        lines, first = inspect.getsourcelines(function)
        for number, text in enumerate(lines, first):
            if call in text:
                out.add(f"{function.__name__} ({path}:{number})")
    return out


WAITING = _waiting_frames()


def frames(line: str) -> tuple[list[str], int]:
    """A raw line: ``frame;frame;... count`` (root first) -> (the frames above the event
    loop's, count). Every stack starts with uvicorn's ``main`` down to ``Runner.run``: those
    frames say nothing of the layer, and a stack that ends there is the loop itself."""
    stack, _, count = line.rstrip("\n").rpartition(" ")
    names = stack.split(";")
    loop = [i for i, frame in enumerate(names) if frame.startswith("Runner.run (")]
    return names[loop[-1] + 1 :] if loop else names, int(count)


def layer_of(stack: list[str]) -> str:
    for name, pattern in INTO:
        if any(pattern.search(frame) for frame in stack):
            return name
    if any(SERVICE.search(frame) for frame in stack):
        return PIPELINE
    for frame in reversed(stack):
        if SHARED.search(frame):
            continue
        for name, pattern in WITHIN:
            if pattern.search(frame):
                return name
    return OTHER


def tally(lines: Iterable[str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for line in lines:
        if line.strip():
            stack, count = frames(line)
            if stack and stack[-1] in WAITING:
                continue
            out[layer_of(stack)] += count
    return out


def table(counts: Counter[str]) -> str:
    total = sum(counts.values()) or 1
    rows = ["| layer | share of samples |", "|---|---|"]
    rows += [f"| {name} | {100 * counts[name] / total:.1f} % |" for name in ORDER]
    rows.append(f"| samples | {total} |")
    return "\n".join(rows)


def main() -> None:
    counts: Counter[str] = Counter()
    for path in sys.argv[1:]:
        counts += tally(Path(path).read_text().splitlines())
    print(table(counts))


if __name__ == "__main__":
    main()
