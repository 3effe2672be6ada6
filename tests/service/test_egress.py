"""The address judgement webhooks and Web Push share: an IPv6 address that embeds an IPv4 one
(6to4, Teredo, NAT64, IPv4-mapped and -compatible) is judged as that IPv4 address."""

from __future__ import annotations

import ipaddress

import pytest

from app.service.delivery.egress import reached, refused


@pytest.mark.parametrize(
    ("address", "leads_to"),
    [
        ("2002:7f00:1::", ["127.0.0.1"]),  # 6to4
        ("2002:808:808::1", ["8.8.8.8"]),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", ["65.54.227.120", "127.0.0.1"]),  # Teredo
        ("64:ff9b::7f00:1", ["127.0.0.1"]),  # NAT64
        ("64:ff9b::a00:1", ["10.0.0.1"]),
        ("::ffff:169.254.169.254", ["169.254.169.254"]),  # IPv4-mapped
        ("::127.0.0.1", ["127.0.0.1"]),  # IPv4-compatible
        ("::1", ["::1"]),
        ("::", ["::"]),
        ("2606:4700::1111", ["2606:4700::1111"]),
        ("93.184.215.14", ["93.184.215.14"]),
    ],
)
def test_an_address_is_judged_as_the_ipv4_address_it_embeds(
    address: str, leads_to: list[str]
) -> None:
    assert [str(a) for a in reached(ipaddress.ip_address(address))] == leads_to


@pytest.mark.parametrize(
    ("address", "nothing", "private", "loopback"),
    [
        ("2002:7f00:1::", True, True, False),
        ("2002:a00:1::", True, False, True),
        ("2002:808:808::1", False, False, False),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", True, True, False),
        ("64:ff9b::7f00:1", True, True, False),
        ("64:ff9b::808:808", False, False, False),
        ("::ffff:127.0.0.1", True, True, False),
        ("::127.0.0.1", True, True, False),
        ("::ffff:169.254.169.254", True, True, True),  # link-local: always refused
        ("fe80::1", True, True, True),
        ("::", True, True, True),
        ("::1", True, True, False),
        ("10.1.2.3", True, False, True),
        ("8.8.8.8", False, False, False),
    ],
)
def test_what_each_setting_allows(
    address: str, nothing: bool, private: bool, loopback: bool
) -> None:
    """Refused with nothing allowed, with private networks allowed, with loopback allowed."""
    ip = ipaddress.ip_address(address)
    assert refused(ip) is nothing
    assert refused(ip, private=True) is private
    assert refused(ip, loopback=True) is loopback
