"""Requests the server makes to URLs its players chose (webhooks, Web Push endpoints): the
address guard they share.

A player's URL could name an address inside the operator's network (SSRF). ``GuardedResolver``
is the aiohttp resolver of those clients: it resolves a name as aiohttp would and keeps only
the addresses ``allowed`` admits (``EndpointRefusedError`` when none is left). The connection
then goes to exactly the addresses it kept, so a DNS answer cannot change between the check
and the connection (rebinding). aiohttp does not ask a resolver about an IP literal: callers
check a literal host themselves (``literal_host``).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver


class EndpointRefusedError(OSError):
    """A URL's host resolves only to addresses the server does not send requests to."""


class GuardedResolver(AbstractResolver):
    """aiohttp's resolver, keeping only the addresses ``allowed`` admits (an IP literal's text,
    as ``getaddrinfo`` gives it)."""

    def __init__(self, allowed: Callable[[str], bool]) -> None:
        self._allowed = allowed
        self._resolver = DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._resolver.resolve(host, port, family)
        kept = [r for r in found if self._allowed(r["host"])]
        if not kept:
            addresses = ", ".join(sorted({r["host"] for r in found}))
            raise EndpointRefusedError(f"{host} resolves to no address allowed ({addresses})")
        return kept

    async def close(self) -> None:
        await self._resolver.close()


def literal_host(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an address when it is an IP literal (which no resolver is asked about)."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
