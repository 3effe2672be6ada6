"""Requests the server makes to URLs its players chose (webhooks, Web Push endpoints): the
address guard they share, and the refusal of redirects.

A player's URL could name an address inside the operator's network (SSRF). ``refused`` judges
one address; an IPv6 address that embeds an IPv4 one (``reached``: IPv4-mapped and
-compatible, 6to4, Teredo, NAT64) is judged as the IPv4 it leads to, since a relay or a
translator on the way would carry the request there. ``GuardedResolver`` is the aiohttp
resolver of those clients: it resolves a name as aiohttp would and keeps only the addresses
``allowed`` admits (``EndpointRefusedError`` when none is left). The connection then goes to
exactly the addresses it kept, so a DNS answer cannot change between the check and the
connection (rebinding). aiohttp does not ask a resolver about an IP literal: callers check a
literal host themselves (``literal_host``).

aiohttp follows a redirect to an IP literal without asking the resolver, so a 3xx could lead a
request anywhere the guard refuses: ``refuse_redirects``, a middleware of both clients, turns
every 3xx into ``RedirectRefusedError`` before aiohttp could follow it, whatever a caller (or a
library between, like pywebpush) asks.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.client_middlewares import ClientHandlerType
from aiohttp.resolver import DefaultResolver

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# NAT64's well-known prefix (RFC 6052): the last 32 bits are the IPv4 address translated to.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class EndpointRefusedError(OSError):
    """A URL's host resolves only to addresses the server does not send requests to."""


class RedirectRefusedError(aiohttp.ClientResponseError):
    """A target answered a redirect, which is never followed (``refuse_redirects``)."""

    def __str__(self) -> str:
        # Not the URL, whose path may hold a push service's or a receiver's token.
        return f"HTTP {self.status}: a redirect, not followed"


async def refuse_redirects(
    request: aiohttp.ClientRequest, handler: ClientHandlerType
) -> aiohttp.ClientResponse:
    """aiohttp client middleware: a 3xx answer raises ``RedirectRefusedError`` (aiohttp calls
    a session's middlewares on each hop, before it would follow one)."""
    response = await handler(request)
    if 300 <= response.status < 400:
        response.release()
        raise RedirectRefusedError(
            response.request_info, (), status=response.status, headers=response.headers
        )
    return response


def reached(address: Address) -> list[Address]:
    """The addresses a connection to ``address`` leads to, each to be judged: the IPv4 one an
    IPv6 address embeds (IPv4-mapped ``::ffff:0:0/96``, IPv4-compatible ``::/96`` but ``::``
    and ``::1``, 6to4 ``2002::/16``, Teredo ``2001::/32``'s server and client, NAT64
    ``64:ff9b::/96``), otherwise ``address`` itself."""
    if isinstance(address, ipaddress.IPv4Address):
        return [address]
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)
    value = int(address)
    if address in NAT64 or 1 < value < 1 << 32:
        return [ipaddress.IPv4Address(value & 0xFFFFFFFF)]
    return [address]


def refused(address: Address, *, loopback: bool = False, private: bool = False) -> bool:
    """Whether a request may not go to ``address`` (or to any address it leads to,
    ``reached``): loopback unless ``loopback``, private and reserved ranges unless
    ``private``, link-local, multicast and unspecified addresses always."""
    return any(_refused_one(one, loopback, private) for one in reached(address))


def _refused_one(address: Address, loopback: bool, private: bool) -> bool:
    if address.is_loopback:
        return not loopback
    if address.is_link_local or address.is_multicast or address.is_unspecified:
        return True
    if address.is_private or address.is_reserved or not address.is_global:
        return not private
    return False


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


def literal_host(host: str) -> Address | None:
    """``host`` as an address when it is an IP literal (which no resolver is asked about)."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def address_of(text: str) -> Address:
    """An address as ``getaddrinfo`` writes it (an IPv6 one perhaps with ``%`` and its zone)."""
    return ipaddress.ip_address(text.split("%", 1)[0])
