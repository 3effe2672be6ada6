"""The server's HTTP, database, Redis and table metrics, on ``prometheus_client``'s default
registry (served at ``/metrics``; other modules define theirs beside the code that updates them).

Every name starts with ``ginrummy_``. Routes are labelled by their template
(``/v1/tables/{table_id}/moves``), never the raw path, so the label set stays small.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

# Request latencies run from well under a millisecond (a cached move) to a database timeout.
LATENCY_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)

HTTP_REQUESTS = Counter(
    "ginrummy_http_requests_total",
    "HTTP requests answered, by method, route template and status code.",
    ["method", "route", "status"],
)
HTTP_LATENCY = Histogram(
    "ginrummy_http_request_duration_seconds",
    "Time from a request's arrival to the end of its response, by method and route template.",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
WEBSOCKETS_OPEN = Gauge(
    "ginrummy_websockets_open",
    "WebSocket connections accepted and not yet closed in this process, by route template.",
    ["route"],
)
WEBSOCKET_SESSIONS = Counter(
    "ginrummy_websocket_sessions_total",
    "WebSocket sessions ended, by route template and close code.",
    ["route", "code"],
)
WEBSOCKET_MESSAGES = Counter(
    "ginrummy_websocket_messages_total",
    "WebSocket messages, by route template and direction (in: from the client).",
    ["route", "direction"],
)
MOVE_COMMIT = Histogram(
    "ginrummy_move_commit_seconds",
    "Time to write one command's events and snapshot (the version-guarded commit), whatever "
    "its source (HTTP, WebSocket, bot).",
    buckets=LATENCY_BUCKETS,
)
TABLE_LOADS = Counter(
    "ginrummy_table_loads_total",
    "Commands that loaded their table from the database instead of this process's cache: "
    "not cached here, stale (another process committed and its bus message did not arrive), "
    "or a refusal decided on the cache being confirmed.",
    ["reason"],
)
TABLES_IN_PLAY = Gauge(
    "ginrummy_tables_in_play",
    "Tables whose match is being played, in the whole database (counted at most every "
    "METRICS_COUNT_MAX_AGE seconds, behind a scrape, so every process reports about the same "
    "figure: aggregate with max, not sum).",
)
DATABASE_ERRORS = Counter(
    "ginrummy_database_errors_total",
    "Requests that failed on the database, by kind (unavailable: a dropped connection or a "
    "lock that never came, answered 503; error: anything else, answered 500).",
    ["kind"],
)
REDIS_ERRORS = Counter(
    "ginrummy_redis_errors_total",
    "Redis operations that failed, by the component that tried (rate_limits, readiness, bus).",
    ["component"],
)
RATE_LIMITED = Counter(
    "ginrummy_rate_limited_total",
    "Requests and messages refused for a rate limit, by limit (token, ip, socket, chat).",
    ["limit"],
)
TOKEN_LOOKUPS = Counter(
    "ginrummy_token_lookups_total",
    "Bearer tokens looked up, by where the answer came from (cache: this process's cache of "
    "resolved and refused tokens; database: one statement).",
    ["source"],
)
REVIEWS = Counter(
    "ginrummy_reviews_total",
    "Hand reviews computed by LUNA in this process's review workers.",
)
REVIEW_CPU = Counter(
    "ginrummy_review_cpu_seconds_total",
    "CPU seconds the review workers spent on those reviews.",
)


class Collections(Collector):
    """``ginrummy_gc_seconds_total``: the CPU time of the process's garbage collections (the
    collecting thread's, from each collection's start to its end), as ``gc.callbacks`` see
    them; the young ones' cost is what ``app.main.GC_YOUNG_EVERY`` was chosen by. The callback
    only adds to a float: it runs inside the collector, where a lock could be held already."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def on_collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.seconds += time.thread_time() - self._started

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(
            "ginrummy_gc_seconds",
            "CPU seconds spent in garbage collections, all generations.",
            value=self.seconds,
        )


COLLECTIONS = Collections()
REGISTRY.register(COLLECTIONS)
gc.callbacks.append(COLLECTIONS.on_collection)
