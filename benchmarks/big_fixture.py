"""A big PostgreSQL database for ``benchmarks/big_data.py``: a million finished matches.

    python benchmarks/big_fixture.py [--matches 1000000] [--open 100000] [--players 50000]
        [--url postgresql://postgres@127.0.0.1:5432/NAME] [--keep]

Without ``--url`` it creates ``bench_big_<time>`` on 127.0.0.1:5432, migrates it to head
(``alembic upgrade head``, as the app does at its start) and drops it at the end unless
``--keep``. It prints how long each step took and the rows and size of every table, then one
JSON line.

The rows are real ones: a few template matches are played first through the service itself
(``TableService`` on a temporary SQLite file, both seats choosing among the legal actions:
knock when allowed, else draw and shed the highest deadwood; some matches resigned after a
hand or two, as many are), and their tables, seats, events, snapshots and results are copied
into PostgreSQL in bulk (``COPY`` of the templates, then ``INSERT ... SELECT`` over
``generate_series``), each copy with its own ids, players and times:

- ``--players`` players (each with a token); a few play a lot (the seat's player is drawn
  with a squared uniform, so the busiest hold thousands of matches and most a handful);
- ``--matches`` finished tables of one match each over the last year, half of them rated
  (``standard``; a rating change per person seated), a fifth against a built-in bot, their
  whole log (``events``) and final snapshot, their ``finished_matches`` row, and a closed seek
  for a third of them (paired in the lobby);
- a rating per player who played rated (deviation and last match spread so the leaderboard
  filter keeps some and passes others);
- ``--open`` tables in the middle of a hand, person against person, each with a clock whose
  deadline is days ahead (``per_move`` correspondence): that many pending clocks.

The big tables' secondary indexes are dropped during the load and built again afterwards
(with the definitions the migrations gave them), and foreign-key triggers are off for the
load (``session_replication_role = replica``): the rows are consistent by construction.
``VACUUM (ANALYZE)`` ends it, as autovacuum would after such a load.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.bus.hub import Hub  # noqa: E402
from app.engine import Action, legal_actions  # noqa: E402
from app.service.pipeline import TableService  # noqa: E402
from app.service.rate_limits import RateLimits  # noqa: E402
from app.settings import Settings  # noqa: E402
from app.store import Database, run_migrations  # noqa: E402
from app.table.commands import Play, Start  # noqa: E402

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
JSON = dict[str, Any]
# Correspondence play: a turn within three days (the open tables' clocks).
CORRESPONDENCE = {"control": "per_move", "seconds": 3 * 86400.0, "policy": "claim"}
# The template matches: how many moves before seat 1 resigns (a match to the target logs 500
# to 1,700 events with these players: a million of them would be a billion rows, hours of load
# here; resigned matches log 15 to 70, about 40 on average).
FINISHED_TEMPLATES = (8, 16, 24, 32, 40, 48, 56, 64)
OPEN_TEMPLATES = 4
# The big tables whose indexes are built after the load rather than kept up row by row.
REINDEXED = ("events", "snapshots", "seats", "finished_matches", "rating_changes", "tables")


@dataclass
class Template:
    """One played table as rows: its events (seq, match, hand, type, data, secret), its
    snapshot's state, the finished match's result (None: still in play) and its clock."""

    table_id: str
    players: tuple[str, str]
    rules: str
    events: list[tuple[int, int, int | None, str, str, str | None]]
    state: str
    result: JSON | None
    clock: str | None


def _choose(state: Any, seat: int) -> Action:
    """Knock when allowed, else go on: draw from the stock, shed the highest card."""
    actions = legal_actions(state, seat)
    kinds = {a.kind for a in actions}
    for kind in ("knock", "big_gin", "next_hand", "pass", "draw_stock"):
        if kind in kinds:
            options = [a for a in actions if a.kind == kind]
            return options[0]
    discards = [a for a in actions if a.kind == "discard"]
    if discards:
        return max(discards, key=lambda a: (a.card or 0) % 13)
    return next(a for a in actions if a.kind != "resign")


async def _play(service: TableService, i: int, moves_before: int, *, open_: bool) -> str:
    """One table through the pipeline: resigned after ``moves_before`` moves or (open) left
    there, in the middle of a hand."""
    ada, _ = await service.create_player(f"Ada{i}")
    bo, _ = await service.create_player(f"Bo{i}")
    clock = CORRESPONDENCE if open_ else None
    created = await service.create_table(ada, "standard", {}, rated=not open_, clock=clock)
    table_id = str(created.body["table_id"])
    await service.join(created.body["invite_code"], bo)
    await service.submit(table_id, ada, Start())
    players = (ada, bo)
    moves = 0
    while True:
        state = (await service.load(table_id)).state
        assert state is not None
        if state.status == "finished":
            return table_id
        if moves >= moves_before and state.hand.phase != "over":
            if open_:
                return table_id
            await service.submit(table_id, players[1], Play(Action("resign")))
            continue
        seat = state.hand.turn if state.hand.phase != "over" else 0
        await service.submit(table_id, players[seat], Play(_choose(state, seat)))
        moves += 1


async def templates() -> tuple[list[Template], list[Template]]:
    """The finished and the open template tables, played on a temporary SQLite file."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite+aiosqlite:///{tmp}/templates.db")
        await run_migrations(db)
        service = TableService(db, Hub(), RateLimits.from_settings(Settings(redis_url=None)))
        finished = [
            await _play(service, i, moves, open_=False)
            for i, moves in enumerate(FINISHED_TEMPLATES)
        ]
        opened = [await _play(service, i, 6 + 2 * i, open_=True) for i in range(OPEN_TEMPLATES)]
        await service.hub.stop()
        await db.close()
        path = f"{tmp}/templates.db"
        return [_read(path, t) for t in finished], [_read(path, t) for t in opened]


def _read(path: str, table_id: str) -> Template:
    with sqlite3.connect(path) as conn:
        rules, match = conn.execute(
            "SELECT rules, match_number FROM tables WHERE id = ?", (table_id,)
        ).fetchone()
        players = tuple(
            r[0]
            for r in conn.execute(
                "SELECT player_id FROM seats WHERE table_id = ? ORDER BY seat", (table_id,)
            )
        )
        events = conn.execute(
            "SELECT seq, match_number, hand_number, type, data, secret FROM events"
            " WHERE table_id = ? ORDER BY seq",
            (table_id,),
        ).fetchall()
        (state,) = conn.execute(
            "SELECT state FROM snapshots WHERE table_id = ? AND match_number = ?",
            (table_id, match),
        ).fetchone()
        row = conn.execute(
            "SELECT winner, reason, scores, final_scores FROM finished_matches WHERE table_id = ?",
            (table_id,),
        ).fetchone()
        clock = conn.execute("SELECT state FROM clocks WHERE table_id = ?", (table_id,)).fetchone()
    result = None
    if row is not None:
        result = {"winner": row[0], "reason": row[1], "scores": row[2], "final_scores": row[3]}
    return Template(
        table_id,
        (str(players[0]), str(players[1])),
        rules,
        [tuple(e) for e in events],
        state,
        result,
        None if clock is None else clock[0],
    )


async def _copy_templates(
    conn: asyncpg.Connection, finished: list[Template], opened: list[Template]
) -> None:
    """The templates as temporary tables: ``fx_tables`` (kind f or o, number k) and
    ``fx_events``."""
    await conn.execute(
        """
        CREATE TEMP TABLE fx_tables (kind text, k int, table_id text, p0 text, p1 text,
            rules text, state text, winner int, reason text, scores text, final_scores text,
            clock text, last_seq int, version int);
        CREATE TEMP TABLE fx_events (kind text, k int, seq int, match_number int,
            hand_number int, type text, data text, secret text);
        """
    )
    tables, events = [], []
    for kind, group in (("f", finished), ("o", opened)):
        for k, t in enumerate(group):
            r = t.result or {}
            tables.append(
                (kind, k, t.table_id, *t.players, t.rules, t.state, r.get("winner"),
                 r.get("reason"), r.get("scores"), r.get("final_scores"), t.clock,
                 len(t.events), len(t.events))
            )  # fmt: skip
            events += [(kind, k, *e) for e in t.events]
    await conn.copy_records_to_table("fx_tables", records=tables)
    await conn.copy_records_to_table("fx_events", records=events)


def _player(n_players: int, salt: str) -> str:
    """A player drawn with a squared uniform (a few play a lot), as SQL over ``i``."""
    return f"md5('p' || (1 + floor({n_players} * power(random(), 2)))::int || '{salt}')"


async def _matches(
    conn: asyncpg.Connection,
    prefix: str,
    count: int,
    seat0: str,
    seat1: str,
    *,
    bots: bool,
) -> None:
    """``count`` finished tables of one match each (ids ``md5(prefix || i)``): their tables,
    seats, log, snapshot, result, rating changes. ``seat0`` and ``seat1`` are SQL choosing
    the seats' players; a fifth of them face a bot if ``bots``."""
    kinds = await conn.fetchval("SELECT count(*) FROM fx_tables WHERE kind = 'f'")
    bot = "i % 5 = 0" if bots else "false"
    await conn.execute(
        f"""
        DROP TABLE IF EXISTS fx_m;
        CREATE TEMP TABLE fx_m AS
        SELECT i, md5('{prefix}' || i) AS tid, i % {kinds} AS k, s0 AS p0,
            CASE WHEN {bot} THEN NULL WHEN s1 = s0 THEN md5(s0) ELSE s1 END AS p1,
            CASE WHEN {bot} THEN (ARRAY['easy', 'medium', 'hard'])[1 + i % 3] END AS bot,
            i % 2 = 0 AS rated, fin - interval '20 minutes' AS created_at, fin AS finished_at
        FROM (SELECT i, {seat0} AS s0, {seat1} AS s1,
                now() - random() * interval '365 days' AS fin
              FROM generate_series(1, {count}) i) g;
        """
    )
    # A player whose id md5(s0) came from a clash exists: make it (a rare extra player).
    await conn.execute(
        """
        INSERT INTO players (id, name, created_at, bot)
        SELECT DISTINCT p1, 'extra', now() - interval '400 days', false FROM fx_m
        WHERE p1 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM players WHERE id = p1)
        """
    )
    await conn.execute(
        """
        INSERT INTO tables (id, created_by, preset, rules, invite_code, status, match_number,
            version, last_seq, created_at, rated, rematch_offer, hints, bot)
        SELECT m.tid, m.p0, 'standard', t.rules::json, left(md5('i' || m.tid), 12),
            'finished', 1, t.version, t.last_seq, m.created_at, m.rated, NULL, false,
            m.bot IS NOT NULL
        FROM fx_m m JOIN fx_tables t ON t.kind = 'f' AND t.k = m.k;

        INSERT INTO seats (table_id, seat, player_id, bot_level, deck_design, joined_at,
            table_open)
        SELECT tid, 0, p0, NULL, 'classic', created_at, false FROM fx_m
        UNION ALL
        SELECT tid, 1, p1, bot, 'classic', created_at, false FROM fx_m;

        INSERT INTO events (table_id, seq, match_number, hand_number, type, data, secret,
            created_at)
        SELECT m.tid, e.seq, e.match_number, e.hand_number, e.type,
            (CASE WHEN e.type IN ('table_created', 'player_joined')
                THEN replace(replace(replace(e.data, t.p0, m.p0), t.p1, coalesce(m.p1, '')),
                    t.table_id, m.tid)
                ELSE e.data END)::json,
            e.secret::json, m.created_at + e.seq * interval '15 seconds'
        FROM fx_m m JOIN fx_tables t ON t.kind = 'f' AND t.k = m.k
        JOIN fx_events e ON e.kind = 'f' AND e.k = m.k;

        INSERT INTO snapshots (table_id, match_number, version, last_seq, state, updated_at)
        SELECT m.tid, 1, t.version, t.last_seq, t.state::json, m.finished_at
        FROM fx_m m JOIN fx_tables t ON t.kind = 'f' AND t.k = m.k;

        INSERT INTO finished_matches (table_id, match_number, seat0_player_id, seat1_player_id,
            seat0_bot_level, seat1_bot_level, winner, reason, scores, final_scores, finished_at)
        SELECT m.tid, 1, m.p0, m.p1, NULL, m.bot, t.winner, t.reason, t.scores::json,
            t.final_scores::json, m.finished_at
        FROM fx_m m JOIN fx_tables t ON t.kind = 'f' AND t.k = m.k;

        INSERT INTO rating_changes (table_id, match_number, player_id, category, result,
            rating_before, deviation_before, rating_after, deviation_after, volatility_after,
            created_at)
        SELECT m.tid, 1, s.pid, 'standard', CASE WHEN t.winner = s.seat THEN 'win' ELSE 'loss' END,
            r, 90, r + CASE WHEN t.winner = s.seat THEN 8 ELSE -8 END, 89, 0.06, m.finished_at
        FROM fx_m m JOIN fx_tables t ON t.kind = 'f' AND t.k = m.k
        CROSS JOIN LATERAL (VALUES (0, m.p0), (1, m.p1)) s (seat, pid)
        CROSS JOIN LATERAL (SELECT 1300 + 400 * random() AS r) x
        WHERE m.rated AND s.pid IS NOT NULL;
        """
    )


async def _ratings(conn: asyncpg.Connection) -> None:
    """A ``standard`` rating for every player with a rated match, from their changes:
    deviation by how many games, last played as their last change."""
    await conn.execute(
        """
        INSERT INTO ratings (player_id, category, rating, deviation, volatility, games, wins,
            losses, last_played_at)
        SELECT player_id, 'standard', 1500 + 350 * (random() + random() + random() - 1.5),
            greatest(45, 350 / sqrt(count(*))), 0.06, count(*),
            count(*) FILTER (WHERE result = 'win'), count(*) FILTER (WHERE result = 'loss'),
            max(created_at)
        FROM rating_changes WHERE player_id NOT IN (SELECT player_id FROM ratings)
        GROUP BY player_id
        """
    )


# A copied clock's state with its turn begun when its deadline says (``since`` = the deadline
# less the bank of the seat to move), so that the timeout applies when the deadline comes: the
# template's ``since`` would leave it days ahead of the row's deadline, and every runner would
# take the clock again at each lease and be refused.
_CLOCK_SINCE = """jsonb_set(t.clock::jsonb, '{since}', to_jsonb(to_char(
    (o.deadline - make_interval(
        secs => (t.clock::json->'banks'->>((t.clock::json->>'seat')::int))::float))
    AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')))::json"""


async def _open_tables(conn: asyncpg.Connection, prefix: str, count: int, n_players: int) -> None:
    """``count`` tables in the middle of a hand, person against person, each with a pending
    correspondence clock (deadline from an hour to three days ahead)."""
    kinds = await conn.fetchval("SELECT count(*) FROM fx_tables WHERE kind = 'o'")
    await conn.execute(
        f"""
        DROP TABLE IF EXISTS fx_o;
        CREATE TEMP TABLE fx_o AS
        SELECT i, md5('{prefix}' || i) AS tid, i % {kinds} AS k, md5('p' || a) AS p0,
            md5('p' || (1 + (a + b) % {n_players})) AS p1,
            now() - random() * interval '3 days' AS created_at,
            now() + interval '1 hour' + random() * interval '71 hours' AS deadline
        FROM (SELECT i, 1 + floor({n_players} * random())::int AS a,
                floor(greatest({n_players} - 1, 1) * random())::int AS b
              FROM generate_series(1, {count}) i) g;

        INSERT INTO players (id, name, created_at, bot)
        SELECT DISTINCT p1, 'extra', now() - interval '400 days', false FROM fx_o
        WHERE NOT EXISTS (SELECT 1 FROM players WHERE id = p1);
        INSERT INTO players (id, name, created_at, bot)
        SELECT DISTINCT p0, 'extra', now() - interval '400 days', false FROM fx_o
        WHERE NOT EXISTS (SELECT 1 FROM players WHERE id = p0);

        INSERT INTO tables (id, created_by, preset, rules, invite_code, status, match_number,
            version, last_seq, created_at, rated, rematch_offer, hints)
        SELECT o.tid, o.p0, 'standard', t.rules::json, left(md5('i' || o.tid), 12),
            'playing', 1, t.version, t.last_seq, o.created_at, false, NULL, false
        FROM fx_o o JOIN fx_tables t ON t.kind = 'o' AND t.k = o.k;

        INSERT INTO seats (table_id, seat, player_id, bot_level, deck_design, joined_at)
        SELECT tid, 0, p0, NULL, 'classic', created_at FROM fx_o
        UNION ALL
        SELECT tid, 1, p1, NULL, 'classic', created_at FROM fx_o;

        INSERT INTO events (table_id, seq, match_number, hand_number, type, data, secret,
            created_at)
        SELECT o.tid, e.seq, e.match_number, e.hand_number, e.type,
            (CASE WHEN e.type IN ('table_created', 'player_joined')
                THEN replace(replace(replace(e.data, t.p0, o.p0), t.p1, o.p1), t.table_id, o.tid)
                ELSE e.data END)::json,
            e.secret::json, o.created_at + e.seq * interval '15 seconds'
        FROM fx_o o JOIN fx_tables t ON t.kind = 'o' AND t.k = o.k
        JOIN fx_events e ON e.kind = 'o' AND e.k = o.k;

        INSERT INTO snapshots (table_id, match_number, version, last_seq, state, updated_at)
        SELECT o.tid, 1, t.version, t.last_seq, t.state::json, o.created_at
        FROM fx_o o JOIN fx_tables t ON t.kind = 'o' AND t.k = o.k;

        INSERT INTO clocks (table_id, state, deadline, lease_owner, lease_until)
        SELECT o.tid, {_CLOCK_SINCE}, o.deadline, NULL, NULL
        FROM fx_o o JOIN fx_tables t ON t.kind = 'o' AND t.k = o.k;
        """
    )


async def _players(conn: asyncpg.Connection, count: int) -> None:
    """``count`` players (``md5('p' || i)``), each with one token."""
    await conn.execute(
        f"""
        INSERT INTO players (id, name, created_at, bot)
        SELECT md5('p' || i), 'player' || i, now() - random() * interval '400 days', false
        FROM generate_series(1, {count}) i;
        INSERT INTO tokens (id, player_id, token_hash, label, created_at, last_used_at,
            expires_at)
        SELECT md5('k' || id), id, encode(sha256(id::bytea), 'hex'), NULL, created_at,
            created_at, NULL
        FROM players WHERE id NOT IN (SELECT player_id FROM tokens);
        """
    )


async def _secondary_indexes(conn: asyncpg.Connection) -> list[tuple[str, str]]:
    """(name, definition) of the big tables' indexes that back no constraint, and the
    events' primary key (no foreign key points at it)."""
    rows = await conn.fetch(
        """
        SELECT c.relname, pg_get_indexdef(i.indexrelid)
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_class t ON t.oid = i.indrelid
        WHERE t.relname = ANY($1::text[])
          AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
        """,
        list(REINDEXED),
    )
    return [(r[0], r[1]) for r in rows]


async def fill(
    url: str,
    matches: int,
    open_tables: int,
    players: int,
    built: tuple[list[Template], list[Template]] | None = None,
) -> JSON:
    """Fill the migrated database at ``url``; the seconds each step took."""
    finished, opened = built or await templates()
    took: JSON = {}
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        await conn.execute(
            "SET synchronous_commit = off; SET session_replication_role = replica;"
            " SET maintenance_work_mem = '512MB'; SET work_mem = '256MB'"
        )
        await _copy_templates(conn, finished, opened)
        indexes = await _secondary_indexes(conn)
        pk = await conn.fetchval(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'events'::regclass"
            " AND contype = 'p'"
        )
        for name, _ in indexes:
            await conn.execute(f'DROP INDEX "{name}"')
        await conn.execute(f'ALTER TABLE events DROP CONSTRAINT "{pk}"')
        steps = [
            ("players", _players(conn, players)),
            ("finished_matches", _matches(
                conn, "t", matches, _player(players, ""), _player(players, ""), bots=True
            )),
            ("open_tables", _open_tables(conn, "o", open_tables, players)),
            ("ratings", _ratings(conn)),
        ]  # fmt: skip
        for name, step in steps:
            began = time.perf_counter()
            await step
            took[name] = round(time.perf_counter() - began, 1)
        began = time.perf_counter()
        await conn.execute(f'ALTER TABLE events ADD CONSTRAINT "{pk}" PRIMARY KEY (table_id, seq)')
        for _, definition in indexes:
            await conn.execute(definition)
        took["indexes"] = round(time.perf_counter() - began, 1)
        began = time.perf_counter()
        # What autovacuum does after such a load (where it is off, as on this project's
        # machine, the visibility map stays empty and every index-only scan visits the heap).
        await conn.execute("VACUUM (ANALYZE)")
        took["vacuum_analyze"] = round(time.perf_counter() - began, 1)
    finally:
        await conn.close()
    return took


async def probe(url: str, player_id: str, history: int, leaders: int) -> None:
    """What ``big_data.py`` asks for, the same on every database: ``history`` finished matches
    of ``player_id`` in seat 0 (against players of their own), ``leaders`` settled and recent
    ``standard`` ratings, and one open table. Ids: the finished tables
    ``md5_of(f"q{player_id}{i}")``, the open one ``md5_of(f"r{player_id}1")`` (another probe
    adds its own; the leaders are shared)."""
    finished, opened = await templates()
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        await conn.execute("SET session_replication_role = replica")
        await _copy_templates(conn, finished, opened)
        await conn.execute(
            f"""
            INSERT INTO players (id, name, created_at, bot)
            SELECT md5('q' || i || 'leader'), 'leader' || i, now(), false
            FROM generate_series(1, {max(history, leaders)}) i ON CONFLICT DO NOTHING;
            INSERT INTO ratings (player_id, category, rating, deviation, volatility, games,
                wins, losses, last_played_at)
            SELECT md5('q' || i || 'leader'), 'standard', 1400 + i, 60, 0.06, 30, 15, 15,
                now() - interval '1 day'
            FROM generate_series(1, {leaders}) i ON CONFLICT DO NOTHING;
            """
        )
        seat1 = "md5('q' || i || 'leader')"
        await _matches(conn, f"q{player_id}", history, f"'{player_id}'", seat1, bots=False)
        await _ratings(conn)
        await _open_tables(conn, f"r{player_id}", 1, 2)
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


def md5_of(text: str) -> str:
    """The id ``md5(text)`` the fixture gives a row."""
    return hashlib.md5(text.encode()).hexdigest()


async def create_database(name: str) -> str:
    """A new PostgreSQL database ``name``, migrated to head; its SQLAlchemy URL."""
    admin = await asyncpg.connect(PG_ADMIN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    db = Database(url)
    try:
        await run_migrations(db)
    finally:
        await db.close()
    return url


async def drop_database(name: str) -> None:
    admin = await asyncpg.connect(PG_ADMIN)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def sizes(url: str) -> JSON:
    """Rows and size (with indexes) of every table that grows with play."""
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        rows = await conn.fetch(
            "SELECT relname, reltuples::bigint, pg_total_relation_size(oid) FROM pg_class"
            " WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace AND reltuples > 0"
            " ORDER BY pg_total_relation_size(oid) DESC"
        )
        total = await conn.fetchval("SELECT pg_database_size(current_database())")
    finally:
        await conn.close()
    out: JSON = {r[0]: {"rows": r[1], "mb": round(r[2] / 2**20)} for r in rows}
    out["database_mb"] = round(total / 2**20)
    return out


async def run(args: argparse.Namespace) -> JSON:
    name = f"bench_big_{datetime.now(UTC):%Y%m%d_%H%M%S}"
    began = time.perf_counter()
    url = args.url or await create_database(name)
    try:
        t = time.perf_counter()
        built = await templates()
        took: JSON = {"templates": round(time.perf_counter() - t, 1)}
        took |= await fill(url, args.matches, args.open, args.players, built)
        took["total"] = round(time.perf_counter() - began, 1)
        return {"url": url, "seconds": took, "tables": await sizes(url)}
    finally:
        if args.url is None and not args.keep:
            await drop_database(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--open", type=int, default=100_000)
    parser.add_argument("--players", type=int, default=50_000)
    parser.add_argument("--url", default=None, help="an existing migrated database instead")
    parser.add_argument("--keep", action="store_true", help="do not drop the new database")
    args = parser.parse_args()
    random.seed(1)
    out = asyncio.run(run(args))
    for key, value in out["seconds"].items():
        print(f"  {key:<20}{value} s")
    for key, value in out["tables"].items():
        print(f"  {key:<24}{value}")
    print(json.dumps({"benchmark": "big_fixture", "matches": args.matches, "open": args.open,
                      "players": args.players, **out}))  # fmt: skip


if __name__ == "__main__":
    main()
