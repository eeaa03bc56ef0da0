"""Which ``Host`` a browser may name when it brings the console's session cookie.

A page on another site can point its own host name at this server (DNS rebinding) and
so talk to it as if it were same-origin. Such a request still names the other site in
``Host``: only the public address's host, the address the server is bound to, and
``localhost`` when that address is loopback, are ours. A server bound to every
interface is reached by any of the machine's addresses, so there any IP literal is
ours — rebinding needs a name, never a literal address. Pure.
"""

from __future__ import annotations

__all__ = ["OwnHosts", "host_name"]

import ipaddress

from .host_port import host_of, url_host
from .records import frozen

_WILDCARDS = ("0.0.0.0", "::", "")
_LOOPBACK_NAMES = ("localhost", "localhost.")


def host_name(host: str) -> str:
    """The name in a ``Host`` value, lower-case, without port or IPv6 brackets."""
    return host_of(host).lower()


def _literal(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


@frozen
class OwnHosts:
    names: frozenset[str]
    any_literal: bool

    @classmethod
    def of(cls, public_url: str, bind_host: str) -> "OwnHosts":
        bound = host_name(bind_host)
        names = {host_name(url_host(public_url)), bound}
        bound_address = _literal(bound)
        if bound in _LOOPBACK_NAMES or (bound_address is not None and bound_address.is_loopback):
            names.update(_LOOPBACK_NAMES)
        names.discard("")
        return cls(frozenset(names), bound in _WILDCARDS)

    def __contains__(self, host: str | None) -> bool:
        if not host:
            return False
        name = host_name(host)
        return name in self.names or (self.any_literal and _literal(name) is not None)
