"""The tables service: the one command pipeline and the read models built on the store.

Every change to a table, whatever its source (HTTP route, WebSocket message, bot), is
``TableService.submit(table_id, actor, command, expected_version=..., idempotency=...)``:

1. authenticate the seat (the caller resolved the token to an ``Actor``, or the bot runner
   acts as ``Actor.bot(seat, level)``; ``commands.seat_of`` finds the actor's seat, a bot's
   only while that seat holds a bot, and each command decides whether the seat may act);
2. load the table, its seats and the match state with the table's version — from this process's
   cache of the tables it played last when it has one (``_decide``: a stale entry is caught by
   the version guard, and a refusal is only final on a fresh load); a commit of another process
   at a table this process listens to (a socket open on it here, a bot it drives) reaches the
   cache over the bus (``on_remote``), so a table whose seats play through different processes
   is not loaded again before each move. The cache subscribes to nothing itself: the bus
   brings this process only the tables it serves, and a copy of another that moved on
   elsewhere meanwhile is refused by the version guard, then loaded;
3. the engine validates and applies (``commands.Command.decide``);
4. append the events and the new snapshot in one transaction guarded by the version
   (``commits.commit``); on a lost race, retry once from a fresh load — a duplicate of the
   same move then meets the engine's refusal — unless the caller pinned ``expected_version``,
   which gets ``409 stale_version``;
5. deliver the stored events and notifications to the bus (``Hub``, or ``RedisBus`` across
   processes; after commit, under the table's in-process lock, so this process's listeners see
   seqs in order; a listener fills any gap from the log).

Other entry points for transport code: ``authenticate(token) -> Actor``, ``load(table_id) ->
Loaded`` (state plus ``loaded.table.version`` / ``last_seq``), ``table_view(table_id, actor)``,
``events_since(table_id, since, seat)`` (redacted, each with its ``seq``), ``log_since(table_id,
since, limit)`` (the same log unredacted, as ``StoredEvent``), ``match_events(loaded, seat)`` (the
current match's events, redacted); ``app.table.views.event_for(stored, seat)`` redacts one.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from app.bus.hub import Hub, Notification
from app.bus.message import Sent
from app.engine import MatchState, RuleError
from app.errors import ConflictError, NotFoundError, ServiceError
from app.logs import annotate
from app.metrics import MOVE_COMMIT, TABLE_LOADS
from app.service import names, ratings
from app.service.lru import LRU
from app.service.new_tables import new_table
from app.service.queries import TableQueries
from app.service.rate_limits import RateLimits
from app.service.tokens import Tokens
from app.store import Database, commits, tables
from app.store.idempotency import idempotent_response, purge_idempotent, save_idempotent
from app.table import clock as clocks
from app.table import commands as orders
from app.table import views
from app.table.commands import DECK_DESIGNS, Actor, Chat, Command, Join, seat_of
from app.table.decide import decide, stale
from app.table.model import Change, Committed, Loaded, Note, SeatInfo, TableRow
from app.table.time import utcnow

# In-process cache: the latest state of recently played tables.
TABLE_CACHE = 4096


@dataclass(frozen=True, slots=True)
class Idempotency:
    """A client's ``Idempotency-Key`` and a fingerprint of the request it came with."""

    key: str
    fingerprint: str


@dataclass(frozen=True, slots=True)
class Result:
    """A command's response: status and JSON body (replayed for an idempotent retry)."""

    status_code: int
    body: dict[str, Any]
    replayed: bool = False


def _remember(
    conn: Connection,
    actor: Actor,
    idempotency: Idempotency | None,
    status_code: int,
    body: dict[str, Any],
) -> None:
    """Save a response under the client's Idempotency-Key, in the transaction of its change."""
    if idempotency is not None:
        save_idempotent(
            conn,
            actor.player_id,
            idempotency.key,
            fingerprint=idempotency.fingerprint,
            status_code=status_code,
            body=body,
        )


class TableService(TableQueries):
    """Players, tables and the command pipeline over one Database and one Hub (the read side:
    ``TableQueries``)."""

    def __init__(
        self,
        db: Database,
        hub: Hub,
        rate_limits: RateLimits,
        public_url: str = "",
        tokens: Tokens | None = None,
        *,
        abandon_after: timedelta = timedelta(days=14),
        max_open_tables: int = 0,
        clock_minimums: clocks.Minimums = clocks.DEFAULT_MINIMUMS,
    ) -> None:
        self.db = db
        self.abandon_after = abandon_after
        # Open (not finished) tables a player may sit at when creating another (0: no cap).
        self.max_open_tables = max_open_tables
        self.clock_minimums = clock_minimums
        self.hub = hub
        self.rate_limits = rate_limits
        self.public_url = public_url.rstrip("/")
        # Bearer tokens, with their cache that revocations evict (``app.service.tokens``).
        self.tokens = tokens or Tokens(db, hub)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        # Table id -> the table as this process last committed or loaded it, or as another
        # process committed it since (``Sent``, decoded when used; see ``_decide``).
        self._tables: LRU[str, Loaded | Sent] = LRU(TABLE_CACHE)
        hub.on_remote(self._moved_elsewhere)
        # Called after a commit that wrote notifications to the outbox (the dispatcher's wake)
        # with the players they are due to now, or with none when which ones is not known,
        # and the fraction of a turn's time left when ``time_running_out`` is due (0: never).
        self.on_notes: Callable[[list[str]], None] | None = None
        self.warn_at = 0.0

    # Players.

    async def create_player(
        self, name: str, address: str | None = None, *, bot: bool = False
    ) -> tuple[Actor, str]:
        """A new anonymous player (a bot account, for good, with ``bot``) and their bearer
        token (only its hash is stored); counted against the ``players_ip`` limit of the
        client's ``address``; the name normalised, or refused (``app.service.names``)."""
        name = names.player_name(name)
        if address is not None:
            await self.rate_limits.hit("players_ip", address)
        actor = Actor(uuid.uuid4().hex, name)
        async with self.db.write() as session:
            await tables.add_player(session, actor.player_id, name, bot=bot)
            await session.flush()  # the token's row refers to the player's
            issued = await self.tokens.add(session, actor.player_id)
        return actor, issued.secret

    async def authenticate(self, token: str | None) -> Actor:
        """The player holding ``token``; UnauthenticatedError when missing, unknown, revoked or
        expired (``app.service.tokens``)."""
        return await self.tokens.authenticate(token)

    # Tables.

    async def create_table(
        self,
        actor: Actor,
        preset: str,
        overrides: dict[str, Any],
        deck_design: str = DECK_DESIGNS[0],
        idempotency: Idempotency | None = None,
        *,
        rated: bool = False,
        clock: dict[str, Any] | None = None,
        hints: bool = False,
    ) -> Result:
        """A table with the actor in seat 0 (201); the ruleset is validated by the engine, the
        time control by ``clocks.parse_control``."""
        if idempotency is not None:
            replay = await self.replay(actor, idempotency)
            if replay is not None:
                return replay
        new = new_table(
            actor, preset, overrides, deck_design,
            minimums=self.clock_minimums, rated=rated, clock=clock, hints=hints,
        )  # fmt: skip
        table, seats, created, clock_state = new
        body = self.render(Loaded(table, seats, None, clock_state), actor)

        cap = self.max_open_tables
        if cap:  # a read first: a refusal then costs no write transaction
            async with self.db.read() as session:
                if await tables.count_open_tables(session, actor.player_id) >= cap:
                    raise _too_many_tables(cap)

        def write(conn: Connection) -> None:
            if cap and tables.open_tables(conn, actor.player_id) >= cap:
                raise _too_many_tables(cap)
            tables.add_table(conn, table, seats[0], created, clock_state)
            _remember(conn, actor, idempotency, 201, body)

        try:
            await self.db.transact(write)
        except IntegrityError:
            # The same Idempotency-Key committed by a concurrent request: that table stands.
            replay = await self.replay(actor, idempotency) if idempotency else None
            if replay is None:
                raise
            return replay
        return Result(201, body)

    async def open_paired(
        self, table: TableRow, seats: tuple[SeatInfo, SeatInfo], clock: dict[str, Any] | None
    ) -> None:
        """A tournament's table (its id chosen with the pairing) with both seats taken, and
        its match started through the pipeline; again for the same id, only what is missing
        (a scheduler that died between the two steps)."""
        try:
            loaded = await self.load(table.id)
        except NotFoundError:
            events = [orders.seat_event(table, info) for info in seats]
            control = clocks.parse_control(clock, self.clock_minimums)
            with contextlib.suppress(IntegrityError):  # another attempt wrote it first
                await self.db.transact(
                    lambda conn: tables.add_table(
                        conn, table, seats[0], events[0], control, seat1=(seats[1], events[1])
                    )
                )
        else:
            if loaded.table.match_number:
                return
        with contextlib.suppress(ConflictError):  # started already
            await self.submit(table.id, orders.SCHEDULER, orders.Begin())

    async def join(
        self,
        code: str,
        actor: Actor,
        deck_design: str = DECK_DESIGNS[0],
        idempotency: Idempotency | None = None,
        *,
        table_id: str | None = None,
    ) -> Result:
        """Take seat 1 of the table the invite code belongs to; with ``table_id`` (the table
        the link named), only if the invite is that table's (409 ``invite_mismatch``)."""
        invited = await self.table_id_by_invite(code)
        if table_id is not None and table_id != invited:
            raise ConflictError(
                "invite_mismatch", "this invite is for another table than the one you opened"
            )
        return await self.submit(invited, actor, Join(deck_design), idempotency=idempotency)

    # The pipeline.

    async def submit(
        self,
        table_id: str,
        actor: Actor,
        command: Command,
        *,
        expected_version: int | None = None,
        idempotency: Idempotency | None = None,
        address: str | None = None,
    ) -> Result:
        """Run ``command`` for ``actor`` at ``table_id`` through the one pipeline (a chat line
        counts against the player's limit and that of the client's ``address``)."""
        if isinstance(command, Chat):
            await self.rate_limits.hit("chat", actor.player_id)
            if address is not None:
                await self.rate_limits.hit("chat_ip", address)
        async with self._lock(table_id):
            cached = True
            fresh_attempts = 0
            while True:
                if idempotency is not None:
                    replay = await self.replay(actor, idempotency)
                    if replay is not None:
                        return replay
                loaded, change, fresh = await self._decide(
                    table_id, actor, command, expected_version, cached=cached
                )
                fresh_attempts += fresh
                # A rated result: the table it finished on, and the final state.
                rated = (loaded, change.state) if change.rated_result and change.state else None

                def also(
                    conn: Connection,
                    committed: Committed,
                    rated: tuple[Loaded, MatchState] | None = rated,
                ) -> dict[str, Any] | None:
                    # The same transaction, after the table's writes: a rated result's
                    # ratings, then the response kept under the Idempotency-Key.
                    if rated is not None:
                        ratings.rate_match(conn, *rated)
                    if idempotency is None:
                        return None
                    body = self._response(committed, actor)
                    _remember(conn, actor, idempotency, 200, body)
                    return body

                started = time.perf_counter()
                try:
                    # Without a key the body is rendered after the commit.
                    needs_also = idempotency is not None or rated is not None
                    committed, saved = await commits.commit(
                        self.db, loaded, change, also if needs_also else None
                    )
                except commits.VersionConflictError:
                    # Another process wrote the table: our cache of it is stale, and a
                    # race lost on a fresh load is retried once.
                    self._tables.pop(table_id)
                    cached = False
                    if expected_version is not None or fresh_attempts == 2:
                        raise stale(None, expected_version) from None
                    continue
                except IntegrityError:
                    # The same Idempotency-Key committed by a concurrent request elsewhere.
                    replay = await self.replay(actor, idempotency) if idempotency else None
                    if replay is None:
                        raise
                    return replay
                MOVE_COMMIT.observe(time.perf_counter() - started)
                self.published(committed, change)
                return Result(200, self._response(committed, actor) if saved is None else saved)

    def published(self, committed: Committed, change: Change) -> None:
        """After a commit (of this pipeline, or of a table made whole by the lobby in one
        transaction): cache the table, deliver its events and live notifications, and wake
        the dispatcher for those written to the outbox."""
        self._keep(committed.after)
        live = [_live(n) for n in change.notes if n.not_before is None]
        self.hub.deliver(committed.stored, live, committed)
        if committed.notes_written and self.on_notes is not None:
            self.on_notes(_due_to(change.notes, committed.notes_written))

    def decide_now(
        self, loaded: Loaded, actor: Actor, command: Command, expected_version: int | None = None
    ) -> Change:
        """``app.table.decide.decide`` at the server's time, with a fresh seed."""
        return decide(
            loaded,
            actor,
            command,
            expected_version,
            self.abandon_after,
            now=utcnow(),
            seed=secrets.token_hex(32),
            warn_at=self.warn_at,
        )

    async def _decide(
        self,
        table_id: str,
        actor: Actor,
        command: Command,
        expected_version: int | None,
        *,
        cached: bool,
    ) -> tuple[Loaded, Change, bool]:
        """``command`` decided on the cached table if ``cached``, else on a fresh load.

        The cache saves the load of most moves, but another process may have moved the table
        on since. Committing on a stale cache is harmless (the version guard refuses it and the
        pipeline reloads); a refusal or a stale version decided on it is only final once a
        fresh load confirms it. Returns (table, change, whether the table was loaded).
        """
        loaded = self._cached(table_id) if cached else None
        reason = "stale" if not cached else "uncached"
        if loaded is not None:
            with contextlib.suppress(ServiceError, RuleError):
                change = self.decide_now(loaded, actor, command, expected_version)
                return loaded, change, False
            reason = "refusal"
        TABLE_LOADS.labels(reason).inc()
        loaded = await self.load(table_id)
        self._keep(loaded)
        change = self.decide_now(loaded, actor, command, expected_version)
        return loaded, change, True

    def _cached(self, table_id: str) -> Loaded | None:
        entry = self._tables.get(table_id)
        if isinstance(entry, Sent):
            try:
                entry = entry.loaded()
            except (ValueError, TypeError, KeyError):
                # Not a form this version reads (a process of another release sent it):
                # the table is loaded instead.
                self._tables.pop(table_id)
                return None
            self._tables.put(table_id, entry)
        return entry

    def _keep(self, loaded: Loaded) -> None:
        """Cache ``loaded`` unless the cache already holds a later state of the table."""
        table = loaded.table
        held = self._tables.get(table.id)
        if held is None or _order(held) < (table.version, table.last_seq):
            self._tables.put(table.id, loaded)

    def _moved_elsewhere(self, table_id: str, sent: Sent | None) -> None:
        """Another process committed at ``table_id`` (one listened to here): a cached copy
        takes its state (the later one wins: messages of two processes may cross), or is
        dropped when the message had none. A table not cached here stays so (nothing to be
        stale). A message lost, or never sent here (a table nobody listens to here), leaves
        the copy stale, which the version guard catches (``_decide``)."""
        held = self._tables.get(table_id)
        if held is None:
            return
        if sent is None:
            self._tables.pop(table_id)
        elif _order(held) < sent.order:
            self._tables.put(table_id, sent)

    def _lock(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[table_id] = lock
        return lock

    async def replay(self, actor: Actor, idempotency: Idempotency) -> Result | None:
        """The response saved under this Idempotency-Key, if any (409 idempotency_key_reused
        when it came with another request)."""
        async with self.db.read() as session:
            row = await idempotent_response(session, actor.player_id, idempotency.key)
        if row is None:
            return None
        if row.fingerprint != idempotency.fingerprint:
            raise ConflictError(
                "idempotency_key_reused", "this Idempotency-Key was used for a different request"
            )
        return Result(row.status_code, row.body, replayed=True)

    async def purge_idempotency_keys(self, older_than: timedelta) -> int:
        """Forget idempotent responses older than ``older_than`` (a retry after that applies
        anew); how many were forgotten."""
        async with self.db.write() as session:
            return await purge_idempotent(session, utcnow() - older_than)

    def _response(self, committed: Committed, actor: Actor) -> dict[str, Any]:
        seat = seat_of(committed.after, actor)
        annotate(seat=seat)
        return {
            "version": committed.version,
            "seq": committed.last_seq,
            "events": [views.event_for(s, seat) for s in committed.stored],
            "table": self.render(committed.after, actor),
        }


def _due_to(notes: list[Note], written: int) -> list[str]:
    """The players a commit's notes are due to now, when every note was written (a player
    without a channel gets none, so then which ones is not known: [] asks for a scan)."""
    if written != len(notes):
        return []
    return list(dict.fromkeys(n.player_id for n in notes if n.not_before is None))


def _live(note: Note) -> Notification:
    return Notification(note.player_id, note.kind, note.table_id or "", note.payload)


def _order(entry: Loaded | Sent) -> tuple[int, int]:
    if isinstance(entry, Sent):
        return entry.order
    return entry.table.version, entry.table.last_seq


def _too_many_tables(cap: int) -> ConflictError:
    return ConflictError(
        "too_many_open_tables", f"you sit at {cap} tables not finished: finish or resign one first"
    )
