"""The notification dispatcher alone: server CPU per webhook delivered.

``--players`` players, each with a webhook on one receiver (a process of its own that answers
204), get one pending ``your_turn`` row each per round; one ``Dispatcher`` in this process,
woken as a commit wakes it, delivers every row (claim, send, record, release). The figure is
this process's CPU time (``time.process_time``) from the wake to the last row marked, divided by
the rows: what each webhook costs the server, apart from the move that wrote it. CPU time is
less disturbed by a shared machine than wall time, which is printed too.

    python benchmarks/dispatcher.py --db sqlite postgresql --players 100 --rounds 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import uvloop
from sqlalchemy import Connection, func, insert, select

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.service.delivery.channels import WebhookChannel  # noqa: E402
from app.service.delivery.webhooks import DeliveryError, Targets, WebhookSender, new_secret  # noqa: E402
from app.service.workers.dispatcher import Dispatcher  # noqa: E402
from app.store import Database, run_migrations  # noqa: E402
from app.store import outbox as store  # noqa: E402
from app.store.models import NotificationSettings, Player  # noqa: E402
from app.table.model import Note  # noqa: E402
from app.table.time import utcnow  # noqa: E402
from benchmarks.server import _free_port, database  # noqa: E402

RECEIVER = """
import asyncio, sys
async def serve(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            length = 0
            for line in head.lower().split(b"\\r\\n"):
                if line.startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            writer.write(b"HTTP/1.1 204 No Content\\r\\nContent-Length: 0\\r\\n\\r\\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()
async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", int(sys.argv[1]))
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""


class CountingSender(WebhookSender):
    """The server's sender, counting the errors of the tries that failed (then retried)."""

    def __init__(self, targets: Targets, timeout: float) -> None:
        super().__init__(targets, timeout)
        self.errors: Counter[str] = Counter()

    async def post(
        self, url: str, secret: str, message_id: str, kind: str, data: dict[str, object]
    ) -> None:
        try:
            await super().post(url, secret, message_id, kind, data)
        except DeliveryError as exc:
            self.errors[str(exc)] += 1
            raise


async def phase(kind: str, players: int, rounds: int) -> dict[str, object]:
    port = _free_port()
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, str(port)])
    for _ in range(500):  # until it listens: a refused first round would count retries
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.02)
            continue
        writer.close()
        break
    async with database(kind) as url:
        db = Database(url)
        await run_migrations(db)
        ids = [f"p{i:05d}" for i in range(players)]
        now = utcnow()

        def seed(conn: Connection) -> None:
            conn.execute(insert(Player), [{"id": p, "name": p, "created_at": now} for p in ids])
            conn.execute(
                insert(NotificationSettings),
                [
                    {
                        "player_id": p,
                        "reminders": "each_turn",
                        "digest_hours": 12.0,
                        "webhook_url": f"http://127.0.0.1:{port}/hook/{p}",
                        "webhook_secret": new_secret(),
                        "push": False,
                        "active": True,
                        "updated_at": now,
                    }
                    for p in ids
                ],
            )

        await db.transact(seed)
        sender = CountingSender(Targets(allow_http=True, allow_loopback=True), timeout=10)
        dispatcher = Dispatcher(
            db,
            [WebhookChannel(sender)],
            scan_interval=1,
            lease_seconds=60,
            retry_seconds=60,
            backoff_base=1,
            backoff_max=30,
        )
        await dispatcher.start()
        cpu = wall = 0.0
        try:
            for number in range(rounds):
                notes = [Note.new(p, "your_turn", "t1", {"seat": 0, "round": number}) for p in ids]

                def write(conn: Connection, notes: list[Note] = notes) -> int:
                    return store.write_notes(conn, notes, utcnow())

                await db.transact(write)
                target = dispatcher.delivered + players
                started_cpu, started = time.process_time(), time.perf_counter()
                dispatcher.wake()
                while dispatcher.delivered < target:
                    await asyncio.sleep(0.001)
                cpu += time.process_time() - started_cpu
                wall += time.perf_counter() - started
            # Every row marked delivered (the last round's marks land after its sends).
            for _ in range(1000):
                async with db.scan() as conn:
                    left = (
                        await conn.execute(
                            select(func.count()).where(store.OUTBOX.c.status == "pending")
                        )
                    ).scalar_one()
                if left == 0:
                    break
                await asyncio.sleep(0.01)
            assert left == 0, f"{left} rows still pending"
        finally:
            await dispatcher.stop()
            await sender.close()
            await db.close()
            receiver.terminate()
            receiver.wait()
    webhooks = players * rounds
    return {
        "webhooks": webhooks,
        "cpu_ms_per_webhook": round(cpu * 1000 / webhooks, 3),
        "webhooks_per_s_wall": round(webhooks / wall, 1),
        "failed": dispatcher.failed,
        "retried": dispatcher.retried,
        "errors": dict(sender.errors),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--players", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    out: dict[str, object] = {"load_average": list(os.getloadavg())}
    for kind in args.db:
        result = await phase(kind, args.players, args.rounds)
        print(kind, json.dumps(result), flush=True)
        out[kind] = result
    out["load_average_end"] = list(os.getloadavg())
    print(json.dumps(out))


if __name__ == "__main__":
    uvloop.run(main())
