"""Every setting of the server, read once from the environment (or a ``.env`` file)."""

from __future__ import annotations

from typing import Literal

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Environment variables of the same name (case-insensitive) override each default."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    database_url: str = "sqlite+aiosqlite:///./ginrummy.db"
    # The plain moves that commit in the same pass of the event loop go as one statement on
    # PostgreSQL, one transaction on SQLite (``app.store.group_commit``); false: each alone.
    group_commit: bool = True
    host: str = "127.0.0.1"
    port: int = 8000
    # Where clients reach this server; invite links are built on it.
    public_url: str = "http://127.0.0.1:8000"
    # Chat: at most ``chat_rate_count`` lines per player within ``chat_rate_window`` seconds
    # (whole seconds; a fraction counts as the next second), and ``rate_limit_chat_ip`` lines
    # per client address (the ``limits`` notation, as below; "" turns it off) whoever sends
    # them: fresh players from one address share it.
    chat_rate_count: int = 5
    chat_rate_window: float = 10.0
    rate_limit_chat_ip: str = "20 per 10 seconds"
    # Creation: new players (``POST /v1/players``) per client address (the ``limits``
    # notation; "" turns it off), and how many open (not finished) tables one player may sit
    # at when creating another (409 ``too_many_open_tables`` beyond it; 0: no cap).
    rate_limit_players_ip: str = "30/minute"
    max_open_tables: int = 50
    # /metrics: the figures counted across the whole database (the tables in play) are read at
    # most once every this many seconds, behind the scrape that finds them older (0: at every
    # scrape; ``app.service.sampled``).
    metrics_count_max_age: float = 10.0
    # WebSockets: a heartbeat after this many seconds without a message (0: none), and how far
    # behind (in events) ``?since=`` may resume before a full view is sent instead.
    ws_heartbeat: float = 15.0
    ws_resume_limit: int = 1000
    # WebSockets: messages waiting to be sent to one socket before it is a slow consumer
    # (closed with 4008, see ``app.api.live.backpressure``); uvicorn's keepalive: a ping after this
    # many seconds, and a socket whose pong takes longer than the timeout is closed.
    ws_send_queue: int = 256
    ws_ping_interval: float = 20.0
    ws_ping_timeout: float = 20.0
    # WebSockets open at once in this process (each process counts its own): at most
    # ``ws_max_per_player`` for one player (their tokens and tickets together) and
    # ``ws_max_per_address`` from one client address (behind a trusted proxy, the address it
    # names: ``FORWARDED_ALLOW_IPS``); one more is refused with ``too_many_sockets`` and 4429.
    # 0: no cap.
    ws_max_per_player: int = 50
    ws_max_per_address: int = 500
    # HTTP: a connection that has not sent a request's complete headers this many seconds after
    # it opened (or after the request's first byte) gets 408 and is closed (0: no timeout).
    http_header_timeout: float = 10.0
    # WebSockets: serve a seatless socket below ASGI once it is live and idle (a few KB of
    # memory instead of ~33; ``app.api.live.parking``). Off: every socket stays an ASGI session.
    ws_park_spectators: bool = True
    # The same for a player's socket (``/v1/players/me/ws``) once accepted
    # (``app.api.live.player``).
    ws_park_players: bool = True
    # Bot seats: the pause before a bot draws (or takes/passes the upcard) and before it
    # discards or knocks (seed 002: about 450 ms each); how often each process looks for bot
    # seats no process acts for; how long a process's claim on a bot seat lasts unrenewed.
    bot_draw_delay: float = 0.45
    bot_discard_delay: float = 0.45
    bot_scan_interval: float = 0.5
    bot_lease_seconds: float = 2.0
    # Tournaments (docs/tournaments.md): how often each process looks for tournaments to
    # pair or advance, and how long its claim on one (the scheduler's lease) lasts unrenewed;
    # the largest capacity, number of Swiss rounds and arena duration (seconds) a tournament
    # may have, the shortest arena, and how many not finished one player may organise.
    tournament_scan_interval: float = 0.5
    tournament_lease_seconds: float = 3.0
    tournament_max_entrants: int = 256
    tournament_max_rounds: int = 15
    tournament_max_duration: int = 86400
    tournament_max_open: int = 5
    tournament_min_duration: int = 60
    # The bot ladder (docs/tournaments.md, "Bot ladder"): how long a bot account stays available
    # after saying so (it says so again before then, or lapses); the ladder's preset and its
    # target (0: the preset's own; a shorter one rates a different game, for tests); the
    # seconds a ladder table gives each turn (per-move clock; out of time: the match is lost).
    ladder_available_seconds: float = 60.0
    ladder_preset: str = "standard"
    ladder_target: int = 0
    ladder_move_seconds: float = 30.0
    # Bot decisions run in this many worker processes at this niceness
    # (app.service.workers.bot_pool). Hard's search budget: playouts per decision (the work; about
    # 150 ms of CPU on a 2-core test machine) and a wall-time cap in ms; both are lowered when
    # decisions queue up.
    bot_search_workers: int = 1
    bot_search_nice: int = 5
    bot_search_playouts: int = 400
    bot_search_cap_ms: float = 150.0
    # Hand reviews and hints by LUNA (app.service.workers.reviews, docs/review.md): their own
    # worker processes at a lower priority than the bots' (and in Linux's idle scheduling
    # class with ``review_idle``: CPU only when nothing else wants it); a review's budget in
    # samples of the hidden cards per decision (about a CPU second per hand); at most
    # ``review_queue_max`` hands queued or reviewed at once per process (429
    # ``review_queue_full`` beyond); a request waits ``review_wait_seconds`` for its review
    # before answering 202 pending. A hint searches ``hint_playouts`` playouts (hard plays
    # with ``bot_search_playouts``).
    review_workers: int = 1
    review_nice: int = 10
    review_idle: bool = False
    review_samples: int = 64
    review_queue_max: int = 32
    review_wait_seconds: float = 5.0
    hint_playouts: int = 200
    # A player's statistics (``GET /v1/players/{id}/stats``) count their newest this many
    # finished matches.
    stats_max_matches: int = 500
    # Once started, take what exists out of garbage collection and make full collections rare
    # (``app.main.tune_gc``). Process-wide: off where the app shares its process (the tests).
    gc_freeze: bool = True
    # A response saved under an Idempotency-Key is kept at least this long (and up to
    # ``idempotency_purge_interval`` seconds more); a retry after that applies anew. The same
    # interval paces the purge of finished notifications (``notify_keep_days``).
    idempotency_ttl_hours: float = 24.0
    idempotency_purge_interval: float = 3600.0
    # The largest request body accepted (413 payload_too_large beyond it). The largest valid
    # one, a 500-character chat line written as JSON \u escapes, is about 6 KB.
    max_body_bytes: int = 8192
    # The deepest nesting of arrays and objects a JSON body may have (422 body_too_deep beyond
    # it, counted before the body is parsed). The deepest valid body, a table's rules or clock
    # or a push subscription's keys, nests 2 levels; the parser itself stops at 1024.
    max_body_depth: int = 32
    # The largest WebSocket message a client may send (uvicorn closes with 1009 beyond it);
    # a move or a ping is under 200 bytes.
    ws_max_message_bytes: int = 16384
    # Apply ``alembic upgrade head`` when the app starts.
    migrate_on_start: bool = True
    # Redis, shared by the processes of one deployment: the bus across processes
    # (``app.bus.redis``) and the rate limits. None keeps everything in process (one server).
    # Every key and channel starts with ``redis_prefix``.
    redis_url: str | None = None
    redis_prefix: str = "ginrummy"
    # Rate limits, in the ``limits`` library's notation ("1200/minute", "20 per second"; ""
    # turns one off), shared through Redis when ``redis_url`` is set: HTTP requests per
    # bearer token and per client address (health and metrics routes are exempt), and
    # frames per WebSocket connection (messages, pings and pongs: ``Allowance``, counted in
    # its process; a ping or pong over it closes the socket with 4429).
    rate_limit_token: str = "3000/minute"
    rate_limit_ip: str = "120000/minute"
    rate_limit_socket: str = "3000/minute"
    # Logs: ``text`` for a person at a terminal, ``json`` (one object a line) for a collector.
    log_format: Literal["text", "json"] = "text"
    log_level: str = "INFO"
    # Bearer tokens: a token issued from now on expires this many days after it is issued (0:
    # never); a process trusts a token it resolved for at most ``token_cache_seconds`` (the
    # longest a revoked token still works on a process that missed the revocation on the bus),
    # and remembers a token it refused (unknown, revoked, expired) as long.
    token_lifetime_days: float = 0.0
    token_cache_seconds: float = 30.0
    # A socket ticket (``POST /v1/ws-tickets``) opens one WebSocket within this many seconds.
    ws_ticket_seconds: float = 30.0
    # Origins (``scheme://host[:port]``, comma-separated) whose pages may call the API from a
    # browser (CORS) and open its WebSockets; the server's own ``public_url`` always may. A
    # socket without an ``Origin`` header (not a browser) is not checked.
    allowed_origins: str = ""
    # Notifications (``app.service.workers.dispatcher``): how often each process looks for due
    # ones (a commit here wakes it at once), how long its claim on a player's notifications
    # lasts unrenewed, and retries: after ``notify_backoff_base`` seconds, doubling up to
    # ``notify_backoff_max``, for ``notify_retry_seconds`` after the notification was written.
    notify_scan_interval: float = 0.5
    notify_lease_seconds: float = 60.0
    notify_retry_seconds: float = 86400.0
    notify_backoff_base: float = 5.0
    notify_backoff_max: float = 3600.0
    # A webhook whose every try has failed for this many seconds is turned off (0: never);
    # registering it again, or a test ping that succeeds, turns it back on. Finished
    # notifications (delivered, failed...) are deleted this many days after (0: kept).
    notify_webhook_disable_seconds: float = 259200.0
    notify_keep_days: float = 30.0
    # Delivery shares: a process delivers to at most ``notify_concurrency`` players at once; a
    # send unanswered after ``notify_slow_seconds`` gives its place up and waits in the slow
    # lane, which holds at most ``notify_slow_slots`` sends (a slow one finding it full is cut
    # short and retried later), so slow or silent targets cannot starve quick ones.
    notify_concurrency: int = 64
    notify_slow_seconds: float = 1.0
    notify_slow_slots: int = 16
    # Webhooks (``app.service.delivery.webhooks``): the timeout of one POST, and which targets are
    # allowed besides https to public addresses (http; private networks; loopback).
    # ``time_running_out`` goes to the person to move on a clocked table when this fraction of
    # their turn's time is left (0: never).
    notify_time_running_out: float = 0.2
    webhook_timeout: float = 10.0
    webhook_allow_http: bool = False
    webhook_allow_private: bool = False
    webhook_allow_loopback: bool = False
    # Web Push (``app.service.delivery.webpush``): the VAPID private key (base64url of the raw
    # 32-byte P-256 key, as ``python -m app.service.delivery.webpush`` prints it, or PEM); empty
    # turns Web Push off (the key route says so; the others answer 404 ``push_disabled``).
    # ``vapid_subject`` is the operator's contact, ``mailto:`` or ``https:`` (push services
    # may write to it); empty: ``public_url``. A push waits at the push service at most
    # ``push_ttl_seconds`` for a device to come online; one request to a push service takes
    # at most ``push_timeout`` seconds.
    # ``push_allow_private`` admits ``http:`` endpoints and private, loopback and link-local
    # addresses (local tests only: otherwise a subscription could make the server POST inside its
    # own network).
    vapid_private_key: str = ""
    vapid_subject: str = ""
    push_ttl_seconds: int = 604800
    push_timeout: float = 10.0
    push_allow_private: bool = False

    # The lobby (``app.service.lobby``, docs/lobby.md). Caps: open seeks and challenges one
    # player has at once (409 ``too_many_seeks``), lobby games not finished at once per player,
    # live and correspondence (409 ``too_many_live_games`` / ``too_many_correspondence_games``;
    # a live game stops counting after ``lobby_live_idle_seconds`` without a move), challenges
    # sent per player (the ``limits`` notation; 429), the longest a seek or challenge may wait
    # (``expires_in``) and its default. A live seek lives while its owner has a socket open on
    # some process: each process renews its players' seeks every third of
    # ``lobby_presence_seconds``, and a seek not renewed for that long lapses. Pairing: each
    # process looks at the pools every ``lobby_scan_interval`` seconds (a new seek here at
    # once); a pair's rating gap may be ``lobby_gap_base`` + ``lobby_gap_per_second`` x the
    # longer wait, at most ``lobby_gap_max``; two players who declined or aborted against each
    # other are not paired again for ``lobby_avoid_seconds``.
    lobby_max_open_seeks: int = 5
    lobby_max_live_games: int = 1
    lobby_max_correspondence_games: int = 20
    lobby_live_idle_seconds: float = 600.0
    rate_limit_challenges: str = "10/minute"
    lobby_seek_max_seconds: float = 2592000.0
    lobby_seek_default_seconds: float = 604800.0
    lobby_presence_seconds: float = 6.0
    lobby_scan_interval: float = 0.25
    lobby_gap_base: float = 100.0
    lobby_gap_per_second: float = 10.0
    lobby_gap_max: float = 600.0
    lobby_avoid_seconds: float = 600.0

    def origins(self) -> list[str]:
        """The allowed origins: ``public_url``'s own, then ``allowed_origins``."""
        own = self.public_url.rstrip("/")
        extra = [o.strip().rstrip("/") for o in self.allowed_origins.split(",") if o.strip()]
        return list(dict.fromkeys([own, *extra]))

    # Clocks (``app.service.workers.deadlines``): how often each process looks for due
    # deadlines (the timeout's lateness is at most about this), how long its claim on one lasts
    # unrenewed,
    # and after how many days without a move the waiting player may claim a match.
    clock_scan_interval: float = 0.25
    clock_lease_seconds: float = 5.0
    abandon_after_days: float = 14.0
    # The shortest time controls a table may choose (422 ``invalid_time_control`` below them;
    # the OpenAPI states them): a ``per_move`` turn (Lichess's shortest control is 15 s), and a
    # ``bank``'s starting time, which a whole match draws on.
    clock_min_per_move: float = 15.0
    clock_min_bank: float = 60.0
