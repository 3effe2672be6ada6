"""The webhook sender's address guard at delivery time, against a real receiver on loopback:
a name that resolves to a refused address is not connected to (the resolver keeps only the
allowed addresses, so the connection goes where the check looked), an IP literal is checked
too (one embedding a loopback IPv4 address as that address), a name that does not resolve gets
the same answer as one refused, and an allowed target gets the signed request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from app.service.delivery.webhooks import DeliveryError, Targets, WebhookSender

SECRET = "whsec_" + "A" * 32


class Receiver:
    """A plain HTTP server on loopback that answers 204 and keeps each request's head."""

    def __init__(self) -> None:
        self.heads: list[bytes] = []
        self.port = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.lower().split(b"\r\n")
                if line.startswith(b"content-length:")
            ),
            0,
        )
        await reader.readexactly(length)
        self.heads.append(head)
        writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    found = Receiver()
    server = await asyncio.start_server(found._serve, "127.0.0.1", 0)
    found.port = server.sockets[0].getsockname()[1]
    async with server:
        yield found


@pytest.mark.parametrize(
    ("targets", "host", "code"),
    [
        (Targets(allow_http=True), "localhost", "webhook_url_refused"),  # by the resolver
        (Targets(allow_http=True), "127.0.0.1", "webhook_url_refused"),  # a literal
        (Targets(allow_loopback=True), "127.0.0.1", "webhook_url_invalid"),  # http not allowed
        (Targets(allow_http=True, allow_private=True), "[2002:7f00:1::]", "webhook_url_refused"),
        (Targets(allow_http=True, allow_private=True), "[::127.0.0.1]", "webhook_url_refused"),
        (Targets(allow_http=True), "no-such-host.invalid", "webhook_url_refused"),
    ],
)
async def test_a_target_not_allowed_is_never_connected_to(
    receiver: Receiver, targets: Targets, host: str, code: str
) -> None:
    sender = WebhookSender(targets, timeout=5)
    try:
        with pytest.raises(DeliveryError) as refused:
            await sender.post(f"http://{host}:{receiver.port}/hook", SECRET, "msg_1", "ping", {})
    finally:
        await sender.close()
    assert str(refused.value) == code
    assert receiver.heads == []


async def test_an_allowed_target_gets_the_signed_request(receiver: Receiver) -> None:
    sender = WebhookSender(Targets(allow_http=True, allow_loopback=True), timeout=5)
    try:
        await sender.post(f"http://localhost:{receiver.port}/hook", SECRET, "msg_2", "ping", {})
        await sender.post(f"http://127.0.0.1:{receiver.port}/hook", SECRET, "msg_3", "ping", {})
    finally:
        await sender.close()
    assert len(receiver.heads) == 2
    for head, message_id in zip(receiver.heads, ["msg_2", "msg_3"], strict=True):
        assert head.startswith(b"POST /hook HTTP/1.1\r\n")
        lines = head.lower().split(b"\r\n")
        assert f"webhook-id: {message_id}".encode() in lines
        assert any(line.startswith(b"webhook-signature: v1,") for line in lines)
