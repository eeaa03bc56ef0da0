"""Network addresses written as text: ``host:port``, and the host of a ``Host`` value.

The rules of ``parse_host_port``, the one reader of a ``host:port`` setting or option
(the AudioSocket listen address, the call simulator's ``--audiosocket``):

* the host is an IPv4 address (``10.0.0.5``), an IPv6 address in brackets
  (``[fd00::5]``; without brackets its colons could not be told from the port's), or a
  host name (``pbx.example.org``: letters, digits and hyphens, labels of at most 63
  characters, at most 253 in all, a name ending in a number is no name);
* the host is required: every interface is ``0.0.0.0`` or ``[::]``;
* the port is decimal digits only, from 1 to 65535;
* nothing else: no spaces, no scheme, no path.

A value that breaks a rule raises ``InvalidHostPort``, whose message names the rule.
``host_of`` reads the lenient ``Host``-header form instead, where the port is optional
and never checked; ``url_host`` takes the ``host:port`` out of a URL. Pure.
"""

from __future__ import annotations

__all__ = ["HostPort", "InvalidHostPort", "host_of", "parse_host_port", "url_host"]

import ipaddress
import re
from typing import NamedTuple
from urllib.parse import urlsplit

EXAMPLE = "10.0.0.5:9092 or [fd00::5]:9092"
MAX_PORT = 65535
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_MAX_NAME = 253


class InvalidHostPort(ValueError):
    """A ``host:port`` value that breaks one of the rules; the message says which."""


class HostPort(NamedTuple):
    """A checked address: ``host`` without brackets, ``port`` from 1 to 65535."""

    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_host_port(text: str) -> HostPort:
    """Read ``host:port`` or ``[ipv6]:port`` by the rules above."""
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise InvalidHostPort(f"{text!r} is not host:port; write it as {EXAMPLE}")
        _check_ipv6(host)
        return HostPort(host, _port(rest[1:]))
    host, colon, port = text.rpartition(":")
    if not colon:
        raise InvalidHostPort(f"{text!r} is not host:port; write it as {EXAMPLE}")
    if not host:
        raise InvalidHostPort("the host is missing; every interface is 0.0.0.0 or [::]")
    if ":" in host:
        raise InvalidHostPort(f"an IPv6 address goes in brackets, as in [{host}]:{port}")
    _check_host(host)
    return HostPort(host, _port(port))


def host_of(value: str) -> str:
    """The host in a ``Host``-style value, without port or IPv6 brackets:
    ``example.org:8080``, ``[::1]:80``, a bare ``::1``. Not checked: whoever asks
    compares it against hosts it knows."""
    value = value.strip()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") == 1:
        return value.partition(":")[0]
    return value


def url_host(url: str) -> str:
    """The ``host:port`` a URL names, never a user and password written into it
    (``https://u:pw@example.org:8443/v1`` gives ``example.org:8443``); empty if none."""
    return urlsplit(url).netloc.rpartition("@")[2]


def _port(text: str) -> int:
    # isdigit alone admits other scripts' digits; a port is written in ASCII. Five
    # digits at most, so no string is too long for int().
    if (not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_PORT))
            or not 1 <= int(text) <= MAX_PORT):
        raise InvalidHostPort(f"the port must be a number from 1 to {MAX_PORT}, not {text!r}")
    return int(text)


def _check_ipv6(host: str) -> None:
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        raise InvalidHostPort(f"[{host}] is not an IPv6 address") from None


def _check_host(host: str) -> None:
    labels = host.split(".")
    if labels[-1].isdigit():
        # All-numeric at the end: meant as an IPv4 address, so it must be one.
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise InvalidHostPort(f"{host!r} is not an IPv4 address") from None
        return
    if len(host) > _MAX_NAME or not all(_LABEL.fullmatch(label) for label in labels):
        raise InvalidHostPort(
            f"{host!r} is not an IP address or a host name (letters, digits, hyphens "
            "and dots)")
