"""What the access log, the request metrics and the HTTP rate limits cost per request.

    python benchmarks/middleware.py [--requests 20000]

Calls the gateway (``app.api.edge.gateway.Gateway``: access log and metrics, CORS, rate limits; no
move lane) around an endpoint that answers at once, in one event loop, with 200 tokens from one
address, and prints CPU and wall time per request: the endpoint alone; with the limits in
memory and no log line; with a JSON access line (to /dev/null); with the limits in Redis
(127.0.0.1:6379, a fresh prefix). The limits are set high enough never to refuse.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from starlette.types import ASGIApp, Message, Receive, Scope, Send  # noqa: E402

from app import logs  # noqa: E402
from app.api.edge.gateway import Gateway  # noqa: E402
from app.service.rate_limits import RateLimits  # noqa: E402
from app.settings import Settings  # noqa: E402

HIGH = "100000000/minute"


def settings(**overrides: Any) -> Settings:
    return Settings(rate_limit_token=HIGH, rate_limit_ip=HIGH, **overrides)


async def endpoint(_scope: Scope, _receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


async def measure(label: str, settings: Settings, requests: int, wrap: bool = True) -> None:
    limits = RateLimits.from_settings(settings)
    owner = SimpleNamespace(
        state=SimpleNamespace(rate_limits=limits), router=SimpleNamespace(routes=[])
    )
    app: ASGIApp = Gateway(endpoint, cors={}, moves=None) if wrap else endpoint

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(_message: Message) -> None:
        return None

    def scope(i: int) -> dict[str, Any]:
        return {
            "type": "http",
            "method": "POST",
            "path": "/v1/tables/t/moves/draw",
            "query_string": b"",
            "headers": [(b"authorization", b"Bearer token-%d" % (i % 200))],
            "client": ("127.0.0.1", 40000),
            "app": owner,
        }

    for i in range(500):
        await app(scope(i), receive, send)
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(requests):
        await app(scope(i), receive, send)
    cpu_us = (time.process_time() - cpu) / requests * 1e6
    wall_us = (time.perf_counter() - wall) / requests * 1e6
    print(f"{label:48} {cpu_us:7.1f} us CPU  {wall_us:7.1f} us wall per request")
    await limits.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20000)
    n = parser.parse_args().requests
    await measure("endpoint alone", settings(), n, wrap=False)
    await measure("limits in memory, no log line", settings(), n)
    with open("/dev/null", "w") as null:
        stdout, sys.stdout = sys.stdout, null
        logs.configure(Settings(log_format="json"))
        sys.stdout = stdout
        await measure("limits in memory, JSON access line", settings(), n)
        redis = settings(
            redis_url="redis://127.0.0.1:6379/0", redis_prefix=f"bench-{uuid.uuid4().hex}"
        )
        await measure("limits in Redis, JSON access line", redis, n)
    print("load average", " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    asyncio.run(main())
