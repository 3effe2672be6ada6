"""Each flood of ``tests/attacks/floods.py`` against a real server, with a canary table beside it.

    python benchmarks/attacks.py [--seconds 10] [--quiet 3] [--only NAME ...]

A flood is a public coroutine of ``tests.attacks.floods`` taking ``(url, seconds)``;
``SERVER_ENV`` there names the settings a flood's server needs, such as a loopback webhook
target, and ``BEHIND_NGINX`` the floods on the proxy, which meet the app through nginx run from
``deploy/nginx.conf`` (the canary plays through it too). For each, a fresh ``python -m app`` on
a SQLite file, then the canary table alone for ``--quiet`` seconds (its move latency without an
attack), then the flood from 127.0.0.1 for ``--seconds`` with the canary playing from 127.0.0.2.
One JSON line per flood: what the flood did and got, the canary's moves and its p50, p99 and
worst move in both phases, and the server's RSS growth over the attack (VmRSS after less before,
and the peak VmHWM less VmRSS before). docs/security.md quotes these figures.

The flood runs in a process of its own (``--flood NAME --url URL``), so that however hard it
works the canary's own loop measures only the server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.attacks import floods
from tests.attacks.harness import Canary, target
from tests.cluster.conftest import start_nginx

Flood = Callable[[str, float], Awaitable[dict[str, float]]]
MB = 1024 * 1024


def all_floods() -> dict[str, Flood]:
    """The floods of ``tests.attacks.floods`` by name: its public coroutines whose parameters
    begin ``(url, seconds)``."""
    return {
        name: cast(Flood, value)
        for name, value in vars(floods).items()
        if not name.startswith("_")
        and inspect.iscoroutinefunction(value)
        and value.__module__ == floods.__name__
        and list(inspect.signature(value).parameters)[:2] == ["url", "seconds"]
    }


def status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {key} for {pid}")


def figures(canary: Canary) -> dict[str, float]:
    return {
        "moves": canary.moves,
        "p50_ms": round(canary.percentile(0.5) * 1000, 1),
        "p99_ms": round(canary.percentile(0.99) * 1000, 1),
        "worst_ms": round(canary.worst * 1000, 1),
        "errors": len(canary.errors),
    }


async def run_apart(name: str, url: str, seconds: float) -> dict[str, float]:
    """Run flood ``name`` in a child process; what it printed."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--flood",
        name,
        "--url",
        url,
        "--seconds",
        str(seconds),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(child.communicate(), seconds + 60)
    if child.returncode != 0:
        raise RuntimeError(f"flood {name} exited {child.returncode}")
    result: dict[str, float] = json.loads(out.decode().strip().splitlines()[-1])
    return result


@contextlib.contextmanager
def served(name: str, tmp: Path) -> Iterator[tuple[int, str]]:
    """The app a flood meets (its pid) and the URL both the flood and the canary use: the
    app's own, or nginx's from ``deploy/nginx.conf`` for a flood on the proxy."""
    env: dict[str, str] = floods.SERVER_ENV.get(name, {})
    with target(tmp, **env) as app:
        if name not in floods.BEHIND_NGINX:
            yield app.process.pid, app.url
            return
        proxy = start_nginx(tmp, [int(app.url.rsplit(":", 1)[1])])
        try:
            yield app.process.pid, proxy.url
        finally:
            proxy.stop()


async def measure(name: str, seconds: float, quiet: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, served(name, Path(tmp)) as (pid, url):
        alone = Canary(url)
        async with alone.running():
            await asyncio.sleep(quiet)
        attacked = Canary(url)
        before = status(pid, "VmRSS")
        async with attacked.running():
            did = await run_apart(name, url, seconds)
        after, peak = status(pid, "VmRSS"), status(pid, "VmHWM")
        return {
            "flood": name,
            "through": "nginx" if name in floods.BEHIND_NGINX else "app",
            "seconds": seconds,
            "did": did,
            "canary_alone": figures(alone),
            "canary_attacked": figures(attacked),
            "rss_growth_mb": round((after - before) / MB, 1),
            "rss_peak_growth_mb": round((peak - before) / MB, 1),
        }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each flood runs")
    parser.add_argument("--quiet", type=float, default=3.0, help="the canary alone, seconds")
    parser.add_argument("--only", nargs="*", default=None, help="floods to run (default: all)")
    parser.add_argument("--flood", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    chosen = all_floods()
    if args.flood:
        print(json.dumps(await chosen[args.flood](args.url, args.seconds)), flush=True)
        return
    if args.only:
        unknown = set(args.only) - set(chosen)
        if unknown:
            parser.error(f"no such flood: {', '.join(sorted(unknown))} (have {sorted(chosen)})")
        chosen = {name: chosen[name] for name in args.only}
    for name in chosen:
        print(json.dumps(await measure(name, args.seconds, args.quiet)), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
