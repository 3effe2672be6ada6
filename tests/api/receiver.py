"""A real HTTP server on a loopback port that records the webhooks POSTed to it, and an
implementation of the Standard Webhooks signature check of its own (hmac + base64 by hand,
not the library the server signs with)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int

    @property
    def json(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.body)
        return value


@dataclass
class Receiver:
    """Answers each POST with the next status planned for its path (200 once none is left)."""

    port: int = 0
    received: list[Received] = field(default_factory=list)
    plans: dict[str, list[int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(length)
                with receiver.lock:
                    plan = receiver.plans.get(self.path, [])
                    status = plan.pop(0) if plan else 200
                    receiver.received.append(
                        Received(
                            self.path, {k.lower(): v for k, v in self.headers.items()}, body, status
                        )
                    )
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def ok(self, path: str) -> list[Received]:
        """The requests to ``path`` answered 2xx, in the order they came."""
        with self.lock:
            return [r for r in self.received if r.path == path and r.status < 300]

    def all(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.path == path]


def verify(secret: str, request: Received, tolerance: float = 300) -> bool:
    """The Standard Webhooks check, written from the specification: the signed content is
    ``{webhook-id}.{webhook-timestamp}.{body}``, the key the base64 after ``whsec_``, the
    signature ``v1,`` + base64(HMAC-SHA256); the timestamp within ``tolerance`` seconds."""
    message_id = request.headers["webhook-id"]
    timestamp = request.headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > tolerance:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{message_id}.{timestamp}.".encode() + request.body
    expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    signatures = request.headers["webhook-signature"].split(" ")
    return any(
        hmac.compare_digest(sig.partition(",")[2], expected)
        for sig in signatures
        if sig.startswith("v1,")
    )
