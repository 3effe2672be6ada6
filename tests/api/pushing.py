"""Web Push test parts: a local HTTP server standing in for a push service, and a browser's
subscription with its own keys that decrypts what it receives (RFC 8291, by hand)."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from app.service.delivery.webpush import b64url


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class PushService:
    """A local HTTP server standing in for a browser's push service: it answers each path
    with the status set in ``status`` (201 otherwise) and records every request."""

    url: str
    status: dict[str, int] = field(default_factory=dict)
    received: queue.Queue[Received] = field(default_factory=queue.Queue)

    def endpoint(self, name: str) -> str:
        return f"{self.url}/push/{name}"

    def drain(self) -> list[Received]:
        out: list[Received] = []
        while not self.received.empty():
            out.append(self.received.get_nowait())
        return out


@contextlib.contextmanager
def running_push_service() -> Iterator[PushService]:
    service: PushService

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            service.received.put(
                Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            status = service.status.get(self.path, 201)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            if status == 429:
                self.send_header("Retry-After", "7")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    service = PushService(f"http://127.0.0.1:{http.server_address[1]}")
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    yield service
    http.shutdown()
    http.server_close()


@dataclass
class Browser:
    """A test subscription: its own P-256 key pair and 16-byte auth secret, as a browser has."""

    endpoint: str
    private: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def public(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )

    def json(self) -> dict[str, object]:
        """What ``PushSubscription.toJSON()`` gives."""
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": b64url(self.public), "auth": b64url(self.auth)},
        }

    def decrypt(self, body: bytes) -> bytes:
        """RFC 8291 (Message Encryption for Web Push) over RFC 8188 aes128gcm, by hand."""
        salt, rs, idlen = body[:16], int.from_bytes(body[16:20], "big"), body[20]
        server_public = body[21 : 21 + idlen]
        ciphertext = body[21 + idlen :]
        assert idlen == 65 and len(ciphertext) <= rs, "one record, keyid = the server's key"
        shared = self.private.exchange(
            ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), server_public)
        )

        def hkdf(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
            prk = hmac.new(salt, ikm, hashlib.sha256).digest()
            return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()[:length]

        ikm = hkdf(self.auth, shared, b"WebPush: info\x00" + self.public + server_public, 32)
        cek = hkdf(salt, ikm, b"Content-Encoding: aes128gcm\x00", 16)
        nonce = hkdf(salt, ikm, b"Content-Encoding: nonce\x00", 12)
        padded = AESGCM(cek).decrypt(nonce, ciphertext, None)
        plain, delimiter, padding = padded.rstrip(b"\x00").rpartition(b"\x02")
        assert delimiter == b"\x02" and not padding, "the last record ends with 0x02"
        return plain
