"""The tables, as SQLAlchemy 2 declarative models (the migrations are the schema's source)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.base import Base


class Player(Base):
    """An anonymous player; their bearer tokens are ``Token`` rows."""

    __tablename__ = "players"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime]
    # A bot account (migration 0013): marked before its first table, never unmarked.
    bot: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))

    __table_args__ = (Index("ix_players_name", text("lower(name)")),)


class Token(Base):
    """One bearer token of a player (migration 0005): only its SHA-256 is kept.

    Revoking deletes the row. ``last_used_at`` is refreshed when a process resolves the token
    afresh (at most once per ``token_cache_seconds`` per process), not on every request.
    """

    __tablename__ = "tokens"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime]
    last_used_at: Mapped[datetime | None]
    expires_at: Mapped[datetime | None]


_PLAYING = text("status = 'playing'")
_BOT = text("status = 'playing' AND bot")
_PENDING = text("status = 'pending'")
_LEASED = text("bot_lease_owner IS NOT NULL")
# ``Seat.table_open`` as each dialect tests it (SQLite serves a partial index to its own words)
_OPEN_PG, _OPEN_SQLITE = text("table_open"), text("table_open = 1")
_HISTORY = ("finished_at", "table_id", "match_number")  # newest first, a total order


class Table(Base):
    """A table: its ruleset, invite code, status, current match and the version guard.

    ``version`` grows with every change of game state (join, start, move, deck design);
    ``last_seq`` is the seq of the newest event in the log (chat advances it, not the version).
    """

    __tablename__ = "tables"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_by: Mapped[str] = mapped_column(ForeignKey("players.id"))
    preset: Mapped[str] = mapped_column(String(32))
    rules: Mapped[dict[str, Any]]
    invite_code: Mapped[str] = mapped_column(String(32), unique=True)
    status: Mapped[str] = mapped_column(String(16))
    match_number: Mapped[int] = mapped_column(Integer, default=0)
    version: Mapped[int] = mapped_column(Integer, default=0)
    last_seq: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime]
    # Chosen at creation (migration 0004): a rated table's finished matches move ratings.
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    # The seat that asked for a rematch, until the other answers (migration 0010).
    rematch_offer: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)
    # Chosen at creation (migration 0011): a casual table whose seat to move may ask LUNA.
    hints: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # A bot has held one of its seats (migration 0015; never unset). The tables being played,
    # and those with a bot, are counted and scanned by their partial indexes.
    bot: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    __table_args__ = (
        Index("ix_tables_playing", "id", postgresql_where=_PLAYING, sqlite_where=_PLAYING),
        Index("ix_tables_bot_playing", "id", postgresql_where=_BOT, sqlite_where=_BOT),
    )


class Seat(Base):
    """Seat 0 or 1 of a table: a player, or a bot of ``bot_level``, and a deck design.

    A bot seat's lease names the one server process that acts for it until ``bot_lease_until``
    (``app.service.workers.bots``); it is claimed and renewed by a conditional UPDATE.
    """

    __tablename__ = "seats"

    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[str | None] = mapped_column(ForeignKey("players.id"), index=True)
    bot_level: Mapped[str | None] = mapped_column(String(32))
    deck_design: Mapped[str] = mapped_column(String(32))
    joined_at: Mapped[datetime]
    bot_lease_owner: Mapped[str | None] = mapped_column(String(64))
    bot_lease_until: Mapped[datetime | None]
    # Whether the seat's table is not finished, written with the table's status when it
    # finishes or a rematch opens it again (``commits.commit_change``).
    table_open: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    # A process's leases, released together when it stops (migration 0017), and a player's
    # open tables, counted at each table they create (0018): the few seats leased or at open
    # tables now, not every seat ever taken.
    __table_args__ = tuple(
        Index(name, column, postgresql_where=pg, sqlite_where=lite)
        for name, column, pg, lite in (
            ("ix_seats_bot_lease_owner", "bot_lease_owner", _LEASED, _LEASED),
            ("ix_seats_player_open", "player_id", _OPEN_PG, _OPEN_SQLITE),
        )
    )


class EventRow(Base):
    """One event of a table's append-only log: ``Event.to_dict()`` with public and private parts.

    ``secret`` holds what no recipient may ever receive through the log itself (the stock order
    of a fresh deal); it feeds the hand history once the hand is over.
    """

    __tablename__ = "events"

    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_number: Mapped[int] = mapped_column(Integer)
    hand_number: Mapped[int | None] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(32))
    data: Mapped[dict[str, Any]]
    secret: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime]

    __table_args__ = (Index("ix_events_hand", "table_id", "match_number", "hand_number"),)


class Snapshot(Base):
    """The latest state of one match at a table (``MatchState.to_dict()``, secrets included)."""

    __tablename__ = "snapshots"

    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id"), primary_key=True)
    match_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    version: Mapped[int] = mapped_column(Integer)
    last_seq: Mapped[int] = mapped_column(Integer)
    state: Mapped[dict[str, Any]]
    updated_at: Mapped[datetime]


class FinishedMatch(Base):
    """A match that ended by target or resignation; abandoned matches never get a row."""

    __tablename__ = "finished_matches"

    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id"), primary_key=True)
    match_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat0_player_id: Mapped[str | None] = mapped_column(ForeignKey("players.id"))
    seat1_player_id: Mapped[str | None] = mapped_column(ForeignKey("players.id"))
    # The level of a bot that held the seat (migration 0003; None for a person, and for rows
    # written before it).
    seat0_bot_level: Mapped[str | None] = mapped_column(String(32))
    seat1_bot_level: Mapped[str | None] = mapped_column(String(32))
    winner: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(16))
    scores: Mapped[list[Any]]
    final_scores: Mapped[list[Any]]
    finished_at: Mapped[datetime]

    # Per seat: a player's history, newest first, walked from a page's keyset on (migration
    # 0016), and their matches won and lost, counted from the index alone (0019).
    __table_args__ = tuple(
        Index(f"ix_finished_matches_seat{s}_{kind}", f"seat{s}_player_id", *columns)
        for s in (0, 1)
        for kind, columns in (("history", _HISTORY), ("record", ("winner",)))
    )


class Review(Base):
    """A finished hand's review by LUNA (``app.bots.review``), kept once computed (migration
    0011): ``data`` is the review's JSON, ``samples`` its budget, ``cpu_seconds`` its cost."""

    __tablename__ = "reviews"

    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id"), primary_key=True)
    match_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    hand_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    samples: Mapped[int] = mapped_column(Integer)
    cpu_seconds: Mapped[float] = mapped_column(Float)
    data: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]


class ChatMessage(Base):
    """A chat line; it is also a public event (``seq``) in the table's log."""

    __tablename__ = "chat_messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]


class IdempotencyKey(Base):
    """The first successful response to a request carrying ``Idempotency-Key``, per player."""

    __tablename__ = "idempotency_keys"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int] = mapped_column(Integer)
    body: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]


class Rating(Base):
    """A player's Glicko-2 rating in one category (a preset), as of their last rated match."""

    __tablename__ = "ratings"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    category: Mapped[str] = mapped_column(String(32), primary_key=True)
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer)
    wins: Mapped[int] = mapped_column(Integer)
    losses: Mapped[int] = mapped_column(Integer)
    last_played_at: Mapped[datetime]

    # The leaderboard walks this backwards: one category, best rating first; the filter's
    # columns ride along so a page skips the rows it passes without reading them.
    __table_args__ = (
        Index(
            "ix_ratings_leaderboard",
            "category",
            "rating",
            "player_id",
            "deviation",
            "last_played_at",
        ),
    )


class RatingChange(Base):
    """What one finished rated match did to one player's rating (once: the key says so)."""

    __tablename__ = "rating_changes"

    table_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    match_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    category: Mapped[str] = mapped_column(String(32))
    result: Mapped[str] = mapped_column(String(8))
    rating_before: Mapped[float] = mapped_column(Float)
    deviation_before: Mapped[float] = mapped_column(Float)
    rating_after: Mapped[float] = mapped_column(Float)
    deviation_after: Mapped[float] = mapped_column(Float)
    volatility_after: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime]

    __table_args__ = (Index("ix_rating_changes_player", "player_id", "created_at"),)


class Clock(Base):
    """A clocked table's time control and its seats' time (``app.table.clock``; migration
    0005). ``deadline`` is when the running seat's time runs out (None: no clock running); the
    deadline runner that acts on it holds ``lease_owner`` until ``lease_until``."""

    __tablename__ = "clocks"

    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id"), primary_key=True)
    state: Mapped[dict[str, Any]]
    deadline: Mapped[datetime | None] = mapped_column(index=True)
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None]


class NotificationSettings(Base):
    """A player's notification choices (``app.service.delivery.preferences``; migration 0007).

    ``reminders``: ``each_turn``, ``digest`` (one message per ``digest_hours`` listing the
    tables where it became their turn) or ``none``. ``active`` is true while the player has a
    channel (a webhook, or ``push`` subscriptions): only then do moves write outbox rows for
    them. The dispatcher delivering their notifications holds ``lease_owner`` until
    ``lease_until``.
    """

    __tablename__ = "notification_settings"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    reminders: Mapped[str] = mapped_column(String(16))
    digest_hours: Mapped[float] = mapped_column(Float)
    webhook_url: Mapped[str | None] = mapped_column(Text)
    webhook_secret: Mapped[str | None] = mapped_column(String(64))
    push: Mapped[bool] = mapped_column(Boolean)
    active: Mapped[bool] = mapped_column(Boolean)
    last_digest_at: Mapped[datetime | None]
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None]
    updated_at: Mapped[datetime]
    # Webhook health (migration 0009): since when every try has failed (None after a success),
    # the last failure, and when the webhook was turned off for failing too long (registering
    # it again, or a test ping that succeeds, turns it back on).
    webhook_failing_since: Mapped[datetime | None]
    webhook_error: Mapped[str | None] = mapped_column(Text)
    webhook_disabled_at: Mapped[datetime | None]


class OutboxRow(Base):
    """One notification for one player, written with the move that causes it (migration 0007).

    ``status``: ``pending`` (due at ``next_at``), ``delivered``, ``failed`` (retried for the
    bounded time, then given up), ``stale`` (no longer true when due: a ``time_running_out``
    whose turn was played) or ``digested`` (sent as part of a digest). ``channels_done`` names
    the channels that already have it, so a retry sends only to the others. Finished rows are
    deleted ``notify_keep_days`` after ``finished_at``.
    """

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    message_id: Mapped[str] = mapped_column(String(40), unique=True)
    player_id: Mapped[str] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(32))
    table_id: Mapped[str | None] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime]
    next_at: Mapped[datetime]
    attempts: Mapped[int] = mapped_column(Integer)
    channels_done: Mapped[list[Any]]
    last_error: Mapped[str | None] = mapped_column(Text)
    finished_at: Mapped[datetime | None]

    __table_args__ = (
        Index("ix_outbox_player", "player_id", "id"),
        Index("ix_outbox_finished", "finished_at"),
        Index("ix_outbox_pending", "next_at", postgresql_where=_PENDING, sqlite_where=_PENDING),
    )


class PushSubscription(Base):
    """A browser's Web Push subscription (migration 0008): where to POST, and the keys the
    payload is encrypted to (RFC 8291). One row per endpoint: a browser that subscribes again,
    as the same or another player, updates its row."""

    __tablename__ = "push_subscriptions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), index=True)
    endpoint: Mapped[str] = mapped_column(String(1024), unique=True)
    p256dh: Mapped[str] = mapped_column(String(100))
    auth: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime]


class Tournament(Base):
    """An arena or Swiss tournament (migration 0012; ``app.service.tournaments``).

    ``status`` is ``upcoming``, ``running`` or ``finished``; ``round`` is the Swiss round
    paired last (an arena counts its pairings in it). The scheduler that pairs and advances it
    runs in the one process holding ``lease_owner`` until ``lease_until``
    (``app.service.workers.tournaments``).
    """

    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    organiser_id: Mapped[str] = mapped_column(ForeignKey("players.id"), index=True)
    name: Mapped[str] = mapped_column(String(80))
    format: Mapped[str] = mapped_column(String(8))
    preset: Mapped[str] = mapped_column(String(32))
    rules: Mapped[dict[str, Any]]
    clock: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    admits: Mapped[str] = mapped_column(String(8))
    capacity: Mapped[int] = mapped_column(Integer)
    starts_at: Mapped[datetime]
    duration_seconds: Mapped[int | None] = mapped_column(Integer)
    rounds: Mapped[int | None] = mapped_column(Integer)
    round_days: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16), index=True)
    round: Mapped[int] = mapped_column(Integer, default=0)
    round_deadline: Mapped[datetime | None]
    ends_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None]


class TournamentEntrant(Base):
    """A player or built-in bot entered in a tournament (``entrant_id``: the player's id, or
    ``bot-<level>-<n>``), with its rating when it entered. In the bot ladder, a bot account is
    available until ``available_until`` (migration 0014)."""

    __tablename__ = "tournament_entrants"

    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    entrant_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    player_id: Mapped[str | None] = mapped_column(ForeignKey("players.id"), index=True)
    bot_level: Mapped[str | None] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(40))
    rating: Mapped[float] = mapped_column(Float)
    joined_at: Mapped[datetime]
    withdrawn: Mapped[bool] = mapped_column(Boolean, default=False)
    available_until: Mapped[datetime | None]


class TournamentPairing(Base):
    """One pairing of a round (or of an arena): ``seat0`` deals first; a bye has no ``seat1``
    nor table. The table's id is chosen with the pairing, so a scheduler that dies between
    the two writes creates that same table, never a second one. ``status``: ``playing``,
    ``finished``, ``drawn`` (a round's deadline passed level), ``bye`` or ``unfinished`` (an
    arena's end came first)."""

    __tablename__ = "tournament_pairings"

    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    round: Mapped[int] = mapped_column(Integer)
    seat0: Mapped[str] = mapped_column(String(40))
    seat1: Mapped[str | None] = mapped_column(String(40))
    table_id: Mapped[str | None] = mapped_column(String(32), index=True)
    status: Mapped[str] = mapped_column(String(16))
    winner: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]


class Seek(Base):
    """A seek or a challenge of the lobby (migration 0013; ``app.service.lobby``).

    ``mode``: ``seek`` (listed, and paired within its ``pool``) or ``challenge`` (to
    ``target_id``, or open to whoever takes its link when that is None). ``status``: ``open``,
    then once ``paired`` (``table_id``: the started table, ``opponent_id``: who), ``cancelled``,
    ``expired`` or ``declined`` (``reason`` says why). Pairing is one conditional UPDATE from
    ``open``: a seek is paired once. A live seek is open while ``alive_until`` is ahead: the
    processes holding its owner's sockets renew it.
    """

    __tablename__ = "seeks"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    mode: Mapped[str] = mapped_column(String(16))
    target_id: Mapped[str | None] = mapped_column(ForeignKey("players.id"))
    preset: Mapped[str] = mapped_column(String(32))
    rules: Mapped[dict[str, Any]]
    clock: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    rated: Mapped[bool] = mapped_column(Boolean)
    # The owner's deck design at the table the pairing makes.
    deck_design: Mapped[str] = mapped_column(String(32), server_default="classic")
    speed: Mapped[str] = mapped_column(String(16))
    pool: Mapped[str] = mapped_column(String(120))
    rating: Mapped[float] = mapped_column(Float)
    rating_min: Mapped[float | None] = mapped_column(Float)
    rating_max: Mapped[float | None] = mapped_column(Float)
    bot_after: Mapped[float | None] = mapped_column(Float)
    bot_offered_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(32))
    table_id: Mapped[str | None] = mapped_column(String(32))
    opponent_id: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    alive_until: Mapped[datetime | None]
    closed_at: Mapped[datetime | None]

    __table_args__ = (
        Index("ix_seeks_open", "status", "mode", "pool"),
        Index("ix_seeks_player", "player_id", "status"),
        Index("ix_seeks_target", "target_id", "status"),
        Index("ix_seeks_table", "table_id"),
    )
