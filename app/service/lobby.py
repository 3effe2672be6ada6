"""The lobby: seeks, quick pairing by rating, open and direct challenges, bots offered.

PostgreSQL (or SQLite) decides every pairing, in one transaction (``_pair``): the players'
rows locked in id order, each seek claimed by one conditional UPDATE from ``open``
(``app.store.seeks.claim``; a seek lost to another process rolls the whole pairing back), the
caps counted, the players' other live seeks cancelled, and the table created, its seat 1 taken
and its match started — the table's commands decided as the pipeline decides them
(``TableService.decide_now``) and written by ``commits.commit_change``. Nothing is written
unless all of it is, so a process killed mid-pairing leaves the seeks open and no table. After
the commit the pipeline delivers the table's events (``TableService.published``) and the bus
carries the lobby's news: ``seek_paired`` to both players, ``seek_added`` / ``seek_removed``
to the lobby's listeners (``LOBBY``, on every process).

Presence: a live seek lives while its owner has a socket open on some process. Each process
renews the open live seeks of the players it holds a socket for (``Hub.present``) every third
of ``presence``; a seek nobody renewed for ``presence`` seconds lapses (``seeks.lapse``) and is
never paired meanwhile (``seeks.claim`` checks it).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from app.bots import DISPLAY_NAMES
from app.bus.hub import Notification
from app.errors import ConflictError, ForbiddenError, InvalidError, NotFoundError
from app.service import ratings
from app.service import seek_news as news
from app.service.new_tables import new_table
from app.service.pipeline import Idempotency, Result, TableService
from app.service.seek_rows import accepted_row, render
from app.store import commits, tables
from app.store import seeks as store
from app.store.idempotency import save_idempotent
from app.store.ratings import ratings_of
from app.table.commands import DECK_DESIGNS, Actor, Join, SeatBot, Start
from app.table.model import Change, Committed, Loaded
from app.table.seeks import Waiting, Widening, pool_of, speed_of
from app.table.time import utcnow

# Reasons a challenged player may give (Lichess's, less those that do not apply).
DECLINE_REASONS = ("generic", "later", "too_fast", "too_slow", "rated", "casual", "rules")
LISTED = 500


@dataclass(frozen=True, slots=True)
class Caps:
    """The lobby's settings (``app.settings``: ``lobby_*``)."""

    open_seeks: int = 5
    live_games: int = 1
    correspondence_games: int = 20
    live_idle: float = 600.0
    longest: float = 2592000.0
    default: float = 604800.0
    presence: float = 6.0
    avoid: float = 600.0
    widening: Widening = field(default_factory=Widening)


@dataclass(frozen=True, slots=True)
class Game:
    """What a seek or challenge asks for, as ``POST /v1/tables`` takes it."""

    preset: str = "standard"
    rules: dict[str, Any] | None = None
    clock: dict[str, Any] | None = None
    rated: bool = False
    deck_design: str = DECK_DESIGNS[0]


class LostError(Exception):
    """A seek of the pairing was no longer open: nothing was written."""


class OverCapError(ConflictError):
    """A player already has the lobby games at once the cap allows."""

    def __init__(self, code: str, message: str, player_id: str) -> None:
        super().__init__(code, message)
        self.player_id = player_id


def _conflict(code: str, message: str) -> ConflictError:
    return ConflictError(code, message)


class Lobby:
    """Seeks and challenges over the tables service's database, pipeline and bus."""

    def __init__(self, service: TableService, caps: Caps = Caps()) -> None:
        self.service = service
        self.db = service.db
        self.hub = service.hub
        self.caps = caps
        self.paired = 0
        # Called when a seek is posted here: the pairing worker looks at once.
        self.on_seek: Callable[[], None] | None = None

    # Posting and reading.

    async def post(
        self,
        actor: Actor,
        game: Game,
        *,
        mode: str = "seek",
        target: str | None = None,
        rating_range: tuple[float | None, float | None] = (None, None),
        bot_after: float | None = None,
        expires_in: float | None = None,
        idempotency: Idempotency | None = None,
    ) -> Result:
        """A new open seek (``mode`` seek) or challenge (to ``target``, a player's id or name,
        or open to whoever has its link): 201 and its body, saved under the Idempotency-Key
        in the same transaction (a retry gets it again rather than a second seek)."""
        if idempotency is not None:
            replay = await self.service.replay(actor, idempotency)
            if replay is not None:
                return replay
        if mode == "challenge":
            await self.service.rate_limits.hit("challenges", actor.player_id)
        now = utcnow()
        rules = game.rules or {}
        # The table it would make, validated now: a bad game is refused before it waits.
        row, _, _, clock = new_table(
            actor, game.preset, rules, game.deck_design,
            minimums=self.service.clock_minimums, rated=game.rated, clock=game.clock,
        )  # fmt: skip
        speed = speed_of(clock)
        if bot_after is not None and (speed != "live" or mode != "seek"):
            raise InvalidError("bot_offer_live_only", "a bot is offered to live seeks only")
        longest = self.caps.longest
        if expires_in is not None and not 0 < expires_in <= longest:
            raise InvalidError("invalid_expiry", f"expires_in is from 1 to {longest:g} seconds")
        target_id = None if target is None else await self._target(actor, target)
        rating = await self._rating(actor, game.preset)
        seek_id = uuid.uuid4().hex
        values = {
            "id": seek_id,
            "player_id": actor.player_id,
            "mode": mode,
            "target_id": target_id,
            "preset": game.preset,
            "rules": rules,
            "clock": game.clock,
            "rated": game.rated,
            "deck_design": game.deck_design,
            "speed": speed,
            "pool": pool_of(game.preset, row.rules, clock, game.rated),
            "rating": rating,
            "rating_min": rating_range[0],
            "rating_max": rating_range[1],
            "bot_after": bot_after,
            "bot_offered_at": None,
            "status": "open",
            "reason": None,
            "table_id": None,
            "opponent_id": None,
            "created_at": now,
            "expires_at": now + timedelta(seconds=expires_in or self.caps.default),
            "alive_until": now + timedelta(seconds=self.caps.presence),
            "closed_at": None,
        }

        def write(conn: Connection) -> dict[str, Any]:
            store.lock_players(conn, [actor.player_id])
            cap = self.caps.open_seeks
            if cap and store.count_open(conn, actor.player_id, now) >= cap:
                raise _conflict(
                    "too_many_seeks", f"you have {cap} open seeks and challenges: cancel one first"
                )
            self._check_games(conn, actor.player_id, speed, now)
            store.add(conn, values)
            found = store.get_now(conn, seek_id)
            assert found is not None
            body = render(found, self.service.public_url)
            if idempotency is not None:
                save_idempotent(
                    conn,
                    actor.player_id,
                    idempotency.key,
                    fingerprint=idempotency.fingerprint,
                    status_code=201,
                    body=body,
                )
            return body

        try:
            body = await self.db.transact(write)
        except IntegrityError:
            # The same Idempotency-Key committed by a concurrent request: that seek stands.
            replay = await self.service.replay(actor, idempotency) if idempotency else None
            if replay is None:
                raise
            return replay
        if mode == "seek":
            news.added(self.hub, body)
            if self.on_seek is not None:
                self.on_seek()
        elif target_id is not None:
            self.hub.deliver([], [Notification(target_id, "challenge_received", "", body)])
        return Result(201, body)

    async def _rating(self, actor: Actor, preset: str) -> float:
        """The actor's rating now in the preset's category (a new player's: 1500)."""
        async with self.db.read() as session:
            found = await ratings_of(session, actor.player_id)
        category = ratings.category_of(preset)
        mine = next((r for r in found if r.category == category), None)
        return round(ratings.current(mine, utcnow()).rating, 1)

    async def _target(self, actor: Actor, target: str) -> str:
        async with self.db.read() as session:
            found = await store.player(session, target) if tables.storable(target) else None
            named = [] if found is not None else await store.players_named(session, target)
        if found is not None:
            target_id = str(found.id)
        elif len(named) == 1:
            target_id = named[0][0]
        elif named:
            raise _conflict("ambiguous_name", f"several players are named {target!r}: use an id")
        else:
            raise NotFoundError("player_not_found", f"no player {target!r}")
        if target_id == actor.player_id:
            raise InvalidError("challenge_yourself", "you cannot challenge yourself")
        return target_id

    async def get(self, seek_id: str, mode: str | None = None) -> dict[str, Any]:
        """A seek or challenge by id (of ``mode`` only, when given: 404 otherwise)."""
        async with self.db.read() as session:
            row = await store.get(session, seek_id) if tables.storable(seek_id) else None
        if row is None or (mode is not None and row.mode != mode):
            raise NotFoundError("seek_not_found", f"no seek or challenge {seek_id!r}")
        return render(row, self.service.public_url)

    async def listed(self) -> list[dict[str, Any]]:
        async with self.db.read() as session:
            rows = await store.listed(session, utcnow(), LISTED)
        return [render(r, self.service.public_url) for r in rows]

    async def mine(self, actor: Actor) -> list[dict[str, Any]]:
        async with self.db.read() as session:
            rows = await store.mine(session, actor.player_id, utcnow())
        return [render(r, self.service.public_url) for r in rows]

    async def mark_bot(self, actor: Actor) -> None:
        """Mark the actor's account as a bot, for good (409 ``already_played`` once it sat at a
        table as a person)."""
        if not await self.db.transact(lambda c: store.mark_bot(c, actor.player_id)):
            raise _conflict(
                "already_played", "a bot account is marked before its first table, not after"
            )

    # Closing without a table.

    async def cancel(self, actor: Actor, seek_id: str, mode: str) -> dict[str, Any]:
        """The owner cancels an open seek or challenge (409 ``seek_closed`` once it is not)."""
        found = await self.get(seek_id, mode)
        if found["player"]["id"] != actor.player_id:
            raise ForbiddenError("not_yours", "only its owner cancels a seek or challenge")
        now = utcnow()
        closed = await self.db.transact(
            lambda c: store.close(c, seek_id, "cancelled", None, now, player_id=actor.player_id)
        )
        if not closed:
            raise _closed(found)
        news.closed(self.hub, found, "cancelled", None)
        return await self.get(seek_id)

    async def decline(self, actor: Actor, seek_id: str, reason: str) -> dict[str, Any]:
        """The challenged player declines, saying why (one of ``DECLINE_REASONS``)."""
        found = await self.get(seek_id, "challenge")
        if found["target"] is None:
            raise _conflict("not_declinable", "only a challenge to you can be declined")
        if found["target"]["id"] != actor.player_id:
            raise ForbiddenError("not_challenged", "this challenge is to another player")
        now = utcnow()
        closed = await self.db.transact(
            lambda c: store.close(c, seek_id, "declined", reason, now, target_id=actor.player_id)
        )
        if not closed:
            raise _closed(found)
        news.closed(self.hub, found, "declined", reason)
        return await self.get(seek_id)

    # Pairing.

    async def accept(self, actor: Actor, seek_id: str, mode: str) -> dict[str, Any]:
        """Take a listed seek or a challenge: exactly one acceptor wins (409 ``seek_closed``
        for the others); the table is started, and the acceptor's own row names it."""
        found = await self.get(seek_id, mode)
        owner = found["player"]
        if owner["id"] == actor.player_id:
            raise _conflict("own_seek", "you cannot accept your own seek")
        target = found["target"]
        if target is not None and target["id"] != actor.player_id:
            raise ForbiddenError("not_challenged", "this challenge is to another player")
        if found["status"] != "open":
            raise _closed(found)
        game = _game(found)
        mine_id = uuid.uuid4().hex
        rating = await self._rating(actor, game.preset)
        now = utcnow()
        speed = found["game"]["speed"]

        def claim(conn: Connection, table_id: str) -> list[str]:
            if not store.claim(conn, seek_id, table_id, actor.player_id, now):
                raise LostError(seek_id)
            mine = accepted_row(mine_id, actor, rating, found, table_id, now)
            store.add(conn, mine)
            return [seek_id, mine_id]

        seat0 = Actor(owner["id"], owner["name"])
        try:
            await self._pair(seat0, actor, game, speed, claim, [seek_id])
        except LostError:
            raise _closed(await self.get(seek_id)) from None
        return await self.get(mine_id)

    async def accept_bot(self, actor: Actor, seek_id: str, level: str) -> dict[str, Any]:
        """The seeker takes the bot offered to their live seek: a started table against a
        built-in bot of ``level`` (a bot is never given without this)."""
        found = await self.get(seek_id, "seek")
        if found["player"]["id"] != actor.player_id:
            raise ForbiddenError("not_yours", "only its owner takes the bot offered to a seek")
        if found["bot_offer"] is None:
            raise _conflict("no_bot_offer", "no bot has been offered to this seek yet")
        if level not in DISPLAY_NAMES:
            raise InvalidError("invalid_bot_level", f"bot level must be one of {DISPLAY_NAMES}")
        now = utcnow()

        def claim(conn: Connection, table_id: str) -> list[str]:
            if not store.claim(conn, seek_id, table_id, None, now):
                raise LostError(seek_id)
            return [seek_id]

        try:
            await self._pair(actor, level, _game(found), "live", claim, [seek_id])
        except LostError:
            raise _closed(await self.get(seek_id)) from None
        return await self.get(seek_id)

    async def pair_seeks(self, first: Waiting, second: Waiting) -> bool:
        """Pair two open seeks of one pool (the older one's owner in seat 0); False when
        either was taken meanwhile (by another process, a cancel, a lapse)."""
        now = utcnow()

        def claim(conn: Connection, table_id: str) -> list[str]:
            if not store.claim(conn, first.seek_id, table_id, second.player_id, now):
                raise LostError(first.seek_id)
            if not store.claim(conn, second.seek_id, table_id, first.player_id, now):
                raise LostError(second.seek_id)
            return [first.seek_id, second.seek_id]

        async with self.db.read() as session:
            found = await store.get_many(session, [first.seek_id, second.seek_id])
        row, other = found.get(first.seek_id), found.get(second.seek_id)
        if row is None or other is None:
            return False
        game = _game(render(row, ""))
        seat0, seat1 = Actor(row.player_id, row.name), Actor(other.player_id, other.name)
        try:
            ids = [first.seek_id, second.seek_id]
            await self._pair(seat0, seat1, game, row.speed, claim, ids, deck1=other.deck_design)
        except LostError:
            return False
        except OverCapError as exc:
            # Playing as many games as the cap allows (a seek posted while a pairing of theirs
            # committed): that player's seek is cancelled, the other waits on.
            seek_id = first.seek_id if exc.player_id == first.player_id else second.seek_id
            code = exc.code
            closed = await self.db.transact(
                lambda c: store.close(c, seek_id, "cancelled", code, now)
            )
            if closed:
                found = await self.get(seek_id)
                news.closed(self.hub, found, "cancelled", exc.code)
            return False
        return True

    async def _pair(  # noqa: PLR0917 - the pairing's parts, each required
        self,
        seat0: Actor,
        seat1: Actor | str,
        game: Game,
        speed: str,
        claim: Callable[[Connection, str], list[str]],
        removed: list[str],
        *,
        deck1: str = DECK_DESIGNS[0],
    ) -> str:
        """One transaction: lock the players, claim the seeks, count the caps, cancel the
        players' other live seeks, create the table, seat 1 (a player, or a bot's level) and
        start the match. Then deliver. Lost or a ConflictError: nothing written."""
        service = self.service
        table, seats, created, clock = new_table(
            seat0, game.preset, game.rules or {}, game.deck_design,
            minimums=service.clock_minimums, rated=game.rated, clock=game.clock,
        )  # fmt: skip
        humans = [seat0.player_id] + ([seat1.player_id] if isinstance(seat1, Actor) else [])
        now = utcnow()

        def work(conn: Connection) -> tuple[list[tuple[Committed, Change]], list[str], list[Any]]:
            store.lock_players(conn, humans)
            claimed = claim(conn, table.id)
            for player_id in humans:
                self._check_games(conn, player_id, speed, now, playing=True)
            others = store.close_live(conn, humans, claimed, now) if speed == "live" else []
            tables.add_table(conn, table, seats[0], created, clock)
            loaded = Loaded(table, seats, None, clock)
            if isinstance(seat1, Actor):
                seat_change = service.decide_now(loaded, seat1, Join(deck1))
            else:
                seat_change = service.decide_now(loaded, seat0, SeatBot(seat1))
            seated = commits.commit_change(conn, loaded, seat_change)
            start = service.decide_now(seated.after, seat0, Start())
            started = commits.commit_change(conn, seated.after, start)
            return [(seated, seat_change), (started, start)], claimed, others

        done, claimed, others = await self.db.transact(work)
        self.paired += 1
        for committed, change in done:
            service.published(committed, change)
        news.removed(self.hub, [*removed, *(seek_id for seek_id, _ in others)])
        async with self.db.read() as session:
            rows = await store.get_many(session, claimed)
        notes = [
            Notification(r.player_id, "seek_paired", table.id, {"seek": render(r, "")})
            for r in rows.values()
        ]
        notes += [
            Notification(
                owner, "seek_closed", "", news.closing(seek_id, "cancelled", store.ELSEWHERE)
            )
            for seek_id, owner in others
        ]
        self.hub.deliver([], notes)
        return table.id

    def _check_games(
        self, conn: Connection, player_id: str, speed: str, now: datetime, *, playing: bool = False
    ) -> None:
        """409 when the player already has the lobby games at once their cap allows."""
        cap = self.caps.live_games if speed == "live" else self.caps.correspondence_games
        if not cap:
            return
        idle = now - timedelta(seconds=self.caps.live_idle)
        if store.games_at_once(conn, player_id, speed, idle) >= cap:
            whose = "they play" if playing else "you play"
            raise OverCapError(
                f"too_many_{speed}_games",
                f"{whose} {cap} {speed} lobby games already: finish one first",
                player_id,
            )


def _closed(found: dict[str, Any]) -> ConflictError:
    status = found["status"]
    why = "its owner is away" if status == "open" else f"it is {status}"
    return _conflict("seek_closed", f"this seek or challenge is not open: {why}")


def _game(found: dict[str, Any]) -> Game:
    game = found["game"]
    return Game(game["preset"], game["rules"], game["clock"], game["rated"], game["deck_design"])
