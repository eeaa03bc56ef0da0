"""Who the client is behind reverse proxies: the rules for ``Forwarded`` (RFC 7239),
``X-Forwarded-For`` and ``X-Forwarded-Proto``.

Those headers are anybody's to write, so they are believed only when the peer that
sent the request is one of the operator's ``server.trusted_proxies``. The chain of
addresses is then walked from the right (the hop nearest to us) leftwards, skipping
every trusted proxy; the first address that is not a trusted proxy is the client. What
lies further left was written by the client itself and is never believed. The scheme
the client used is the ``proto`` the proxy recorded for that same hop.

When ``Forwarded`` is present it is read and the ``X-Forwarded-*`` pair is not, so a
proxy must clear the one it does not write (docs/deployment.md's nginx block clears
``Forwarded``): a client's own header passed on untouched would otherwise be believed.
``X-Forwarded-Host`` is not read: the proxy passes the client's ``Host`` on as it is
(see docs/deployment.md), so there is one source of truth for the host.

Pure: addresses in, addresses out.
"""

from __future__ import annotations

__all__ = ["Hop", "Origin", "TrustedProxies", "origin", "parse_trusted_proxies"]

import ipaddress
import re
from typing import Iterable

from .host_port import host_of
from .records import frozen

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Hops looked at from the right; a longer chain is cut there (nobody runs 32 proxies,
#: and a header stuffed with thousands of entries costs no more than this).
MAX_HOPS = 32
_PROTOS = ("http", "https")
_SEPARATORS = re.compile(r"[\s,]+")


def header_address(text: str) -> Address | None:
    """An address from a header entry: ``1.2.3.4``, ``1.2.3.4:80``, ``[::1]:80``,
    ``::1``; None for anything else (``unknown``, obfuscated ``_names``, garbage)."""
    try:
        found = ipaddress.ip_address(host_of(text.strip().strip('"')))
    except ValueError:
        return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


@frozen
class TrustedProxies:
    networks: tuple[Network, ...] = ()

    def __contains__(self, address: Address | None) -> bool:
        return address is not None and any(
            address.version == network.version and address in network
            for network in self.networks)


def parse_trusted_proxies(text: str) -> TrustedProxies:
    """Addresses or CIDR networks, comma or space separated; ValueError names a bad one."""
    networks = []
    for entry in _SEPARATORS.split(text.strip()):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is not an address or a network such as "
                             "10.0.0.0/8") from None
    return TrustedProxies(tuple(networks))


@frozen
class Hop:
    """One proxy's record of whom it heard from, and over which scheme."""

    client: Address | None
    proto: str | None


@frozen
class Origin:
    """The client's address (as text) and scheme; ``proto`` None keeps the server's."""

    client: str
    proto: str | None


def _proto(text: str | None) -> str | None:
    value = (text or "").strip().strip('"').lower()
    return value if value in _PROTOS else None


def _forwarded_hops(values: Iterable[str]) -> list[Hop]:
    """``Forwarded: for=1.2.3.4;proto=https, for="[::1]"`` — one Hop an element."""
    hops = []
    for element in ",".join(values).split(","):
        pairs = {}
        for pair in element.split(";"):
            name, _, value = pair.partition("=")
            pairs[name.strip().lower()] = value
        hops.append(Hop(header_address(pairs["for"]) if "for" in pairs else None,
                        _proto(pairs.get("proto"))))
    return hops


def _x_forwarded_hops(fors: Iterable[str], protos: Iterable[str]) -> list[Hop]:
    """``X-Forwarded-For`` with ``X-Forwarded-Proto`` paired by position when they
    are as long; otherwise every hop takes the proto nearest to us."""
    addresses = ",".join(fors).split(",")
    schemes = [part for part in ",".join(protos).split(",") if part.strip()]
    if len(schemes) != len(addresses):
        schemes = [schemes[-1] if schemes else ""] * len(addresses)
    return [Hop(header_address(a), _proto(p)) for a, p in zip(addresses, schemes)]


def origin(peer: str, headers: Iterable[tuple[str, str]],
           trusted: TrustedProxies) -> Origin:
    """Who sent the request: ``peer`` itself unless it is a trusted proxy, else the
    hop left of the last trusted one. ``headers`` are (lower-case name, value)."""
    peer_address = header_address(peer)
    if peer_address not in trusted:
        return Origin(peer, None)
    forwarded, fors, protos = [], [], []
    for name, value in headers:
        if name == "forwarded":
            forwarded.append(value)
        elif name == "x-forwarded-for":
            fors.append(value)
        elif name == "x-forwarded-proto":
            protos.append(value)
    if forwarded:
        hops = _forwarded_hops(forwarded)
    elif fors:
        hops = _x_forwarded_hops(fors, protos)
    else:
        # A trusted proxy that names no client still says which scheme it was asked on.
        return Origin(peer, _proto(protos[-1]) if protos else None)
    current = Origin(str(peer_address), None)
    for hop in reversed(hops[-MAX_HOPS:]):
        if hop.client is None:
            # The proxy we trust could not name its client: believe nothing further.
            return Origin(current.client, hop.proto or current.proto)
        current = Origin(str(hop.client), hop.proto)
        if hop.client not in trusted:
            return current
    return current
