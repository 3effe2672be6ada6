"""The FastAPI application: ``create_app(settings)`` wires store, service, hub and routes.

At start the lifespan applies the migrations, then exposes on ``app.state``: ``db``
(``app.store.Database``), ``hub`` (``app.bus.hub.Hub`` in process, or
``app.bus.redis.RedisBus`` with ``redis_url``; ``hub.health() -> str | None`` says why it is
degraded), ``rate_limits`` (``app.service.rate_limits.RateLimits``), ``service``
(``app.service.pipeline.TableService``), ``bots`` (``app.service.workers.bots.BotRunner``, which
plays the bot seats) and ``readiness`` (``app.api.http.routes.health.Readiness``, the named checks
of ``/readyz``), ``tickets`` (``app.service.tickets.Tickets``, the socket tickets) and ``webpush``
(``app.service.delivery.webpush.WebPushChannel``: push subscriptions and delivery) — WebSocket
routes reach them through ``app.state`` (``websocket.app.state.service``).
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from app.api.edge.gateway import Gateway
from app.api.edge.move_lane import MoveLane
from app.api.edge.occupancy import Occupancy
from app.api.edge.request_body import BodyLimit
from app.api.http import errors
from app.api.http.routes import (
    bots,
    challenges,
    docs,
    health,
    moves,
    notifications,
    players,
    push,
    ratings,
    reviews,
    seeks,
    tables,
    tickets,
    tournaments,
    web,
)
from app.api.http.schemas.common import RATE_LIMITED
from app.api.live import routes as live
from app.api.live.frames import Frames
from app.bots.review import ReviewBudget
from app.bots.search import Budget
from app.bus.hub import Hub
from app.bus.redis import RedisBus
from app.service.delivery.channels import Channel, PushChannel, WebhookChannel
from app.service.delivery.preferences import Preferences
from app.service.delivery.webhooks import Targets, WebhookSender
from app.service.delivery.webpush import WebPushChannel
from app.service.ladder import Ladder
from app.service.ladder import Settings as LadderSettings
from app.service.lobby import Caps, Lobby
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.service.sampled import Sampled
from app.service.tickets import Tickets
from app.service.tokens import Tokens
from app.service.tournaments import Limits as TournamentLimits
from app.service.tournaments import Tournaments
from app.service.workers.bot_pool import BotPool
from app.service.workers.bots import WAKE_EVENTS, BotRunner
from app.service.workers.deadlines import DeadlineRunner
from app.service.workers.dispatcher import Dispatcher
from app.service.workers.pairing import PairingWorker
from app.service.workers.reviews import Reviews
from app.service.workers.tournaments import FINISH_EVENTS, TournamentRunner
from app.settings import Settings
from app.store import Database, outbox, run_migrations
from app.table.clock import Minimums
from app.table.seeks import Widening

log = logging.getLogger(__name__)

# Collections of the oldest generation: one per this many of the middle one (CPython: 10).
GC_FULL_EVERY = 100
# Collections of the youngest generation: one per this many new tracked objects (CPython: 700).
GC_YOUNG_EVERY = 10_000


def tune_gc() -> None:
    """Make full garbage collections rare and shorter; they stop every request meanwhile.

    A full collection walks every tracked object: at 100 live tables (400 open connections,
    each with its coroutines, tasks and queues) about 60,000 objects besides the 120,000 the
    imports made, 110 ms of CPU every 10 s or so under load, measured. Freezing what exists once
    the app has started (modules, classes, routes, schemas: alive for good) takes those out of
    every collection, and ``GC_FULL_EVERY`` makes full ones ten times rarer. The server makes
    little cyclic garbage (a few objects per closed connection); the young generations still
    collect it, and what reaches the oldest one waits a little longer.

    A young collection cost 0.5-0.9 ms here, about as much at CPython's threshold of 700 new
    objects as at 10,000: at 700 they took 4.6-5.0 % of the server's CPU at capacity, at
    ``GC_YOUNG_EVERY`` 0.6 %, thirteen times fewer (measured: docs/performance.md).
    """
    gc.collect()
    gc.freeze()
    _, middle, _ = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_EVERY, middle, GC_FULL_EVERY)


async def purge_old_rows(purges: dict[str, Callable[[], Awaitable[int]]], interval: float) -> None:
    """At start and every ``interval`` seconds, delete what is kept only for a while: idempotent
    responses past their time (each holds a whole response body), finished notifications."""
    while True:
        for name, purge in purges.items():
            try:
                await purge()
            except Exception:
                log.exception("purging %s failed", name)
        await asyncio.sleep(interval)


def database_check(db: Database) -> health.Check:
    """The readiness check of the database: one round trip."""

    async def check() -> None:
        try:
            await db.ping()
        except Exception as exc:
            raise ConnectionError("the database does not answer") from exc

    return check


def bus_check(bus: Hub) -> health.Check:
    """The readiness check of the bus: its subscriber task is connected to Redis."""

    async def check() -> None:
        reason = bus.health()
        if reason is not None:
            raise ConnectionError(reason)

    return check


def create_app(settings: Settings | None = None) -> FastAPI:
    """A new app instance for ``settings`` (environment defaults when None)."""
    settings = settings or Settings()
    clock_minimums = Minimums(settings.clock_min_per_move, settings.clock_min_bank)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = Database(settings.database_url, group_commit=settings.group_commit)
        if settings.migrate_on_start:
            await run_migrations(db)
        hub = (
            Hub()
            if settings.redis_url is None
            else RedisBus(
                settings.redis_url, settings.redis_prefix, watched=WAKE_EVENTS | FINISH_EVENTS
            )
        )
        await hub.start()
        rate_limits = RateLimits.from_settings(settings)
        app.state.db = db
        app.state.hub = hub
        app.state.rate_limits = rate_limits
        ticket_store = app.state.tickets = Tickets(
            settings.ws_ticket_seconds, settings.redis_url, settings.redis_prefix
        )
        lifetime = settings.token_lifetime_days
        tokens = Tokens(
            db,
            hub,
            cache_seconds=settings.token_cache_seconds,
            lifetime=timedelta(days=lifetime) if lifetime > 0 else None,
        )
        service = TableService(
            db,
            hub,
            rate_limits,
            settings.public_url,
            tokens,
            abandon_after=timedelta(days=settings.abandon_after_days),
            max_open_tables=settings.max_open_tables,
            clock_minimums=clock_minimums,
        )
        readiness = app.state.readiness = health.Readiness()
        readiness.add("database", database_check(db))
        if settings.redis_url is not None:
            readiness.add("redis", rate_limits.check_redis, required=False)
            readiness.add("bus", bus_check(hub), required=False)
        bot_pool = BotPool(
            settings.bot_search_workers,
            Budget(settings.bot_search_playouts, settings.bot_search_cap_ms),
            settings.bot_search_nice,
        )
        bots = BotRunner(
            service,
            draw_delay=settings.bot_draw_delay,
            discard_delay=settings.bot_discard_delay,
            scan_interval=settings.bot_scan_interval,
            lease_seconds=settings.bot_lease_seconds,
            pool=bot_pool,
        )
        app.state.service = service
        app.state.tables_in_play = Sampled(service.tables_in_play, settings.metrics_count_max_age)
        app.state.bots = bots
        review_pool = BotPool(
            settings.review_workers,
            Budget(settings.hint_playouts, settings.bot_search_cap_ms),
            settings.review_nice,
            idle=settings.review_idle,
        )
        app.state.reviews = Reviews(
            service,
            review_pool,
            budget=ReviewBudget(settings.review_samples),
            queue_max=settings.review_queue_max,
            wait_seconds=settings.review_wait_seconds,
        )
        # Web Push: a subscription sets the player's push flag in the outbox's settings, so their
        # notifications are written for it (``outbox.set_push_channel``).
        webpush = app.state.webpush = WebPushChannel(
            db, settings, on_subscribed=outbox.set_push_channel
        )
        await bots.start()
        deadlines = DeadlineRunner(
            service,
            scan_interval=settings.clock_scan_interval,
            lease_seconds=settings.clock_lease_seconds,
        )
        app.state.deadlines = deadlines
        await deadlines.start()
        app.state.tournaments = Tournaments(
            db,
            TournamentLimits(
                settings.tournament_max_entrants,
                settings.tournament_max_rounds,
                settings.tournament_max_duration,
                settings.tournament_max_open,
                settings.tournament_min_duration,
            ),
            clock_minimums,
        )
        app.state.ladder = Ladder(
            db,
            LadderSettings(
                settings.ladder_available_seconds,
                settings.ladder_preset,
                settings.ladder_target,
                settings.ladder_move_seconds,
            ),
        )
        scheduler = app.state.scheduler = TournamentRunner(
            service,
            scan_interval=settings.tournament_scan_interval,
            lease_seconds=settings.tournament_lease_seconds,
        )
        await scheduler.start()
        targets = Targets(
            allow_http=settings.webhook_allow_http,
            allow_private=settings.webhook_allow_private,
            allow_loopback=settings.webhook_allow_loopback,
        )
        sender = WebhookSender(targets, settings.webhook_timeout)
        app.state.preferences = Preferences(db, targets, sender)
        channels: list[Channel] = [WebhookChannel(sender), PushChannel(webpush)]
        dispatcher = app.state.dispatcher = Dispatcher(
            db,
            channels,
            scan_interval=settings.notify_scan_interval,
            lease_seconds=settings.notify_lease_seconds,
            retry_seconds=settings.notify_retry_seconds,
            backoff_base=settings.notify_backoff_base,
            backoff_max=settings.notify_backoff_max,
            webhook_disable_seconds=settings.notify_webhook_disable_seconds,
            keep_days=settings.notify_keep_days,
            concurrency=settings.notify_concurrency,
            slow_seconds=settings.notify_slow_seconds,
            slow_slots=settings.notify_slow_slots,
        )
        service.on_notes = dispatcher.wake
        service.warn_at = settings.notify_time_running_out
        await dispatcher.start()
        lobby = app.state.lobby = Lobby(service, lobby_caps(settings))
        pairing = app.state.pairing = PairingWorker(
            lobby, scan_interval=settings.lobby_scan_interval
        )
        await pairing.start()
        ttl = timedelta(hours=settings.idempotency_ttl_hours)
        purger = asyncio.create_task(
            purge_old_rows(
                {
                    "idempotency keys": lambda: service.purge_idempotency_keys(ttl),
                    "notifications": dispatcher.purge,
                },
                settings.idempotency_purge_interval,
            )
        )
        if settings.gc_freeze:
            tune_gc()
        try:
            yield
        finally:
            # The timers of app.api.live.parking and .player, made on first use: their
            # sockets were closed by the server's shutdown.
            for timers in ("parking", "heartbeats"):
                made = getattr(app.state, timers, None)
                if made is not None:
                    made.close()
            purger.cancel()
            await asyncio.gather(purger, return_exceptions=True)
            await scheduler.stop()
            await pairing.stop()
            await deadlines.stop()
            await dispatcher.stop()
            await sender.close()
            await bots.stop()
            await webpush.close()
            await hub.stop()
            await ticket_store.close()
            await rate_limits.close()
            await app.state.tables_in_play.close()
            await asyncio.to_thread(bot_pool.close)
            await app.state.reviews.close()
            await asyncio.to_thread(review_pool.close)
            await db.close()

    # fastapi-offline's copies of the docs pages' scripts, served from here rather than from a
    # CDN: /docs and /redoc (app/api/http/routes/docs.py) work offline, under a strict CSP.
    app = FastAPIOffline(
        docs_url=None,
        redoc_url=None,
        static_url=docs.STATIC,
        title="Gin Rummy server",
        version="0.1.0",
        description="Play Gin Rummy over HTTP: every move goes through one command pipeline; "
        "each caller sees only what the rules let them see.",
        lifespan=lifespan,
        # FastAPI's native OpenTelemetry looks up the global providers on every request; this
        # server's metrics and logs are its own (app/metrics.py, app/logs.py).
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.settings = settings
    # Table messages rendered once per audience (app/api/live/frames.py).
    app.state.frames = Frames()
    # Open sockets per address and per player, capped (app/api/edge/occupancy.py).
    app.state.occupancy = Occupancy(settings.ws_max_per_player, settings.ws_max_per_address)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    errors.install(app)
    # Outermost: every request, refused or not, gets its id, its metrics and its line, then
    # CORS, then the rate limits; a plain move is answered there (app/api/edge/gateway.py).
    cors = {
        "allow_origins": settings.origins(),
        "allow_methods": ["GET", "POST", "PUT", "DELETE"],
        "allow_headers": ["Authorization", "Content-Type", "Idempotency-Key", "X-Request-ID"],
        "expose_headers": ["X-Request-ID", "Idempotency-Replayed", "Retry-After"],
        "max_age": 600,
    }
    app.add_middleware(Gateway, cors=cors, moves=MoveLane(settings.max_body_bytes))
    # Moves first: routes are matched in order, and moves are most of the traffic.
    # Every operation but the health routes' answers 429 past a rate limit
    # (app/api/edge/ratelimit.py).
    routers = (moves, seeks, challenges, players, notifications, tables, reviews, live, tickets)
    for module in (*routers, health, ratings, push, tournaments, bots):
        app.include_router(module.router, responses=None if module is health else RATE_LIMITED)
    app.include_router(docs.router)
    web.mount(app)  # last: the client's pages take only the paths no API route has
    document_clock_minimums(app, clock_minimums)
    return app


def lobby_caps(settings: Settings) -> Caps:
    """The lobby's caps and pairing settings (``lobby_*``)."""
    return Caps(
        open_seeks=settings.lobby_max_open_seeks,
        live_games=settings.lobby_max_live_games,
        correspondence_games=settings.lobby_max_correspondence_games,
        live_idle=settings.lobby_live_idle_seconds,
        longest=settings.lobby_seek_max_seconds,
        default=settings.lobby_seek_default_seconds,
        presence=settings.lobby_presence_seconds,
        avoid=settings.lobby_avoid_seconds,
        widening=Widening(
            settings.lobby_gap_base, settings.lobby_gap_per_second, settings.lobby_gap_max
        ),
    )


def document_clock_minimums(app: FastAPI, minimums: Minimums) -> None:
    """Have the OpenAPI state this server's shortest time controls (settings), not just the
    defaults the schemas were written with."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schemas = generate()["components"]["schemas"]
            shortest = {"PerMoveClockIn": minimums.per_move, "BankClockIn": minimums.bank}
            for name, seconds in shortest.items():
                schemas[name]["properties"]["seconds"]["minimum"] = seconds
        return app.openapi_schema or generate()

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's way to amend its OpenAPI
