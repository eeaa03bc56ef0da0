"""The egress gate: may the service send a request to this URL?

spec: telephony.md "Outward notifications" — "Every attempt passes the same egress
gate as other connectors and is recorded." The HTTP tools of agents use it too.

The gate keeps requests from reaching the service's own machine, its private network
and the cloud's metadata service. It is pure: the adapter resolves the host name, passes
every address it got to ``check_egress``, and then connects to one of exactly those
addresses — resolving again would let a second answer slip past the gate.

Refused, unless the administrator put the host on the allow list:

* a scheme other than http or https, or a URL without a host;
* the names ``localhost`` (and any name under it) and the cloud metadata names;
* any address that is unspecified, loopback, link-local, private (RFC 1918, IPv6
  unique-local and site-local), shared (carrier-grade NAT), multicast, reserved, a
  cloud metadata address, or otherwise not global (documentation, benchmarking…);
* the same addresses written inside IPv6: IPv4-mapped (``::ffff:127.0.0.1``), NAT64
  (``64:ff9b::7f00:1``) and 6to4 (``2002:7f00:1::``).

An allow-list entry is a host name or an IP address as written in URLs; it lets that
host through whatever it resolves to.

A host is judged as the HTTP client will read it, not as it is written: compatibility
forms are folded (fullwidth ``１２７.０.０.１``), the dots IDNA treats as dots count
(``127。0。0。1``), and the numbers ``inet_aton`` accepts are addresses (``2130706433``,
``0177.0.0.1``, ``0x7f.1``). The adapter judges again, with the client's own URL
parser, and checks the address of every socket before it connects.
"""

from __future__ import annotations

__all__ = [
    "EgressDecision",
    "EgressReason",
    "check_egress",
    "classify_address",
    "display_host",
    "normal_host",
    "parse_address",
    "parse_allow_hosts",
    "reason_words",
]

import enum
import ipaddress
import re
import unicodedata
from collections.abc import Collection, Iterable
from urllib.parse import urlsplit

from .records import frozen

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_SCHEMES = frozenset(("http", "https"))

# Names that reach the metadata service without an address we would see as special.
_METADATA_NAMES = frozenset(
    ("metadata.google.internal", "metadata.goog", "metadata", "instance-data",
     "instance-data.ec2.internal")
)  # fmt: skip

_HOST_NAME = re.compile(r"(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*")

# The full stops IDNA (UTS #46) maps to ".": ideographic, fullwidth, halfwidth.
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})

# One part of an IPv4 address as ``inet_aton`` reads it: hex, octal or decimal.
_ATON_PART = re.compile(r"0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*")

# NAT64 embeds an IPv4 address in the low 32 bits (RFC 6052 well-known prefix).
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# IPv4-compatible IPv6 (``::127.0.0.1``, deprecated by RFC 4291): never a destination
# of ours, whatever it carries.
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


class EgressReason(enum.Enum):
    """Why a request was refused; the values are recorded with each attempt."""

    #: Not http or https.
    SCHEME = "scheme"
    #: No host, or a URL that does not parse (a bad port).
    BAD_URL = "bad_url"
    #: The host name did not resolve to any address.
    UNRESOLVED = "unresolved"
    #: A resolved "address" that is not an IP address.
    BAD_ADDRESS = "bad_address"
    #: A cloud metadata service, by name or address.
    METADATA = "metadata"
    #: 0.0.0.0, :: and the rest of 0.0.0.0/8.
    UNSPECIFIED = "unspecified"
    #: This machine: 127.0.0.0/8, ::1, localhost.
    LOOPBACK = "loopback"
    #: 169.254.0.0/16, fe80::/10.
    LINK_LOCAL = "link_local"
    #: RFC 1918, fc00::/7 unique-local, fec0::/10 site-local, local-use NAT64.
    PRIVATE = "private"
    #: 100.64.0.0/10, carrier-grade NAT.
    SHARED = "shared"
    #: 224.0.0.0/4, ff00::/8.
    MULTICAST = "multicast"
    #: 240.0.0.0/4 and the broadcast address.
    RESERVED = "reserved"
    #: Any other address that is not global: documentation, benchmarking, protocol
    #: assignments.
    NOT_PUBLIC = "not_public"


# Checked in order; the first network holding the address names the reason.
_REFUSED_NETWORKS = tuple(
    (ipaddress.ip_network(network), reason)
    for network, reason in (
        ("169.254.169.254/32", EgressReason.METADATA),  # AWS, Azure, GCP, OpenStack
        ("169.254.170.2/32", EgressReason.METADATA),  # AWS container credentials
        ("100.100.100.200/32", EgressReason.METADATA),  # Alibaba Cloud
        ("fd00:ec2::254/128", EgressReason.METADATA),  # AWS over IPv6
        ("0.0.0.0/8", EgressReason.UNSPECIFIED),
        ("::/128", EgressReason.UNSPECIFIED),
        ("127.0.0.0/8", EgressReason.LOOPBACK),
        ("::1/128", EgressReason.LOOPBACK),
        ("169.254.0.0/16", EgressReason.LINK_LOCAL),
        ("fe80::/10", EgressReason.LINK_LOCAL),
        ("10.0.0.0/8", EgressReason.PRIVATE),
        ("172.16.0.0/12", EgressReason.PRIVATE),
        ("192.168.0.0/16", EgressReason.PRIVATE),
        ("fc00::/7", EgressReason.PRIVATE),
        ("fec0::/10", EgressReason.PRIVATE),
        ("64:ff9b:1::/48", EgressReason.PRIVATE),
        ("100.64.0.0/10", EgressReason.SHARED),
        ("224.0.0.0/4", EgressReason.MULTICAST),
        ("ff00::/8", EgressReason.MULTICAST),
        ("240.0.0.0/4", EgressReason.RESERVED),
        # Named here so the reason does not depend on the Python version's idea of
        # "global"; anything else special is caught by ``is_global`` below.
        ("192.0.0.0/24", EgressReason.NOT_PUBLIC),  # protocol assignments
        ("192.0.2.0/24", EgressReason.NOT_PUBLIC),  # documentation
        ("198.51.100.0/24", EgressReason.NOT_PUBLIC),
        ("203.0.113.0/24", EgressReason.NOT_PUBLIC),
        ("198.18.0.0/15", EgressReason.NOT_PUBLIC),  # benchmarking
        ("2001:db8::/32", EgressReason.NOT_PUBLIC),  # documentation
    )
)

_DESCRIPTIONS = {
    EgressReason.METADATA: "a cloud metadata address",
    EgressReason.UNSPECIFIED: "an unspecified address",
    EgressReason.LOOPBACK: "a loopback address (this machine)",
    EgressReason.LINK_LOCAL: "a link-local address",
    EgressReason.PRIVATE: "a private address",
    EgressReason.SHARED: "a shared (carrier-grade NAT) address",
    EgressReason.MULTICAST: "a multicast address",
    EgressReason.RESERVED: "a reserved address",
    EgressReason.NOT_PUBLIC: "not a public address",
}


# A reason in a few words, for a refusal shown to someone who may not learn more (the
# owner of a target, a model calling a tool): never an address.
_REASON_WORDS = {
    EgressReason.SCHEME: "not http or https",
    EgressReason.BAD_URL: "not a valid URL",
    EgressReason.UNRESOLVED: "its name does not resolve",
    EgressReason.BAD_ADDRESS: "not an IP address",
    EgressReason.METADATA: "cloud metadata",
    EgressReason.UNSPECIFIED: "unspecified",
    EgressReason.LOOPBACK: "loopback (this machine)",
    EgressReason.LINK_LOCAL: "link-local",
    EgressReason.PRIVATE: "private",
    EgressReason.SHARED: "shared (carrier-grade NAT)",
    EgressReason.MULTICAST: "multicast",
    EgressReason.RESERVED: "reserved",
    EgressReason.NOT_PUBLIC: "not public",
}


def reason_words(reason: EgressReason | None) -> str:
    """``reason`` in a few words, without any address."""
    return _REASON_WORDS[reason] if reason is not None else "refused"


@frozen
class EgressDecision:
    """The gate's answer. ``reason`` and ``detail`` are ``None`` when allowed;
    ``detail`` is a sentence for the record and the administrator."""

    allowed: bool
    host: str | None
    reason: EgressReason | None = None
    detail: str | None = None


def _refuse(host: str | None, reason: EgressReason, detail: str) -> EgressDecision:
    return EgressDecision(False, host, reason, detail)


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries, in the forms that route to it."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def classify_address(address: IPAddress) -> EgressReason | None:
    """The reason to refuse ``address``, or ``None`` for a public one. An IPv6
    address carrying an IPv4 one is judged by both."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        reason = classify_address(embedded)
        if reason is not None:
            return reason
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
        address = ipaddress.IPv6Address(int(address))  # "fe80::1%eth0" is fe80::1
    for network, reason in _REFUSED_NETWORKS:
        if address.version == network.version and address in network:
            return reason
    if address.version == 6 and address in _IPV4_COMPATIBLE:
        carried = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        return classify_address(carried) or EgressReason.NOT_PUBLIC
    # The IPv6 wrapper of a public IPv4 address is not "global" itself; its IPv4
    # address was judged above. Python counts the IETF's reserved blocks (``::/8``
    # beyond the forms above, unallocated space) as global; nothing is served there.
    if embedded is None and (not address.is_global or address.is_reserved):
        return EgressReason.NOT_PUBLIC
    return None


def normal_host(host: str) -> str:
    """``host`` as a client connects to it: compatibility characters folded (NFKC),
    IDNA's full stops made dots, lower case, without brackets or a final dot."""
    folded = unicodedata.normalize("NFKC", host).translate(_DOTS)
    return folded.strip().lower().removeprefix("[").removesuffix("]").rstrip(".")


def _inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """The address of a legacy IPv4 form (``2130706433``, ``0177.0.0.1``, ``0x7f.1``,
    ``127.1``), read as the C library's ``inet_aton`` reads it; None for anything else."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_ATON_PART.fullmatch(part) for part in parts):
        return None
    numbers = [int(part[2:] or "0", 16) if part.startswith("0x") else int(part, 8) if part.startswith("0")
               else int(part) for part in parts]  # fmt: skip
    *leading, last = numbers
    if any(number > 255 for number in leading) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for position, number in enumerate(leading):
        value |= number << (8 * (3 - position))
    return ipaddress.IPv4Address(value)


def _host_of(url: str) -> tuple[str | None, EgressDecision | None]:
    """The URL's host in lower case without a final dot, or the refusal."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        return None, _refuse(None, EgressReason.BAD_URL, f"{url!r} is not a valid URL")
    host = normal_host(parts.hostname or "")
    if parts.scheme.lower() not in _SCHEMES:
        return host or None, _refuse(
            host or None,
            EgressReason.SCHEME,
            f"only http and https are allowed, not {parts.scheme!r}",
        )
    if not host:
        return None, _refuse(None, EgressReason.BAD_URL, f"{url!r} names no host")
    return host, None


def check_egress(
    url: str,
    addresses: Iterable[str | IPAddress],
    allow_hosts: Collection[str] = (),
) -> EgressDecision:
    """Decide whether to send a request to ``url``.

    ``addresses`` are all the addresses its host resolved to (for an IP literal the
    literal itself is checked whatever is passed). ``allow_hosts`` is the
    administrator's allow list. Every address must pass.
    """
    host, refusal = _host_of(url)
    if refusal is not None:
        return refusal
    assert host is not None
    if host in {normal_host(entry) for entry in allow_hosts}:
        return EgressDecision(True, host)
    if host in _METADATA_NAMES:
        return _refuse(host, EgressReason.METADATA, f"{host} is a cloud metadata service")
    if host == "localhost" or host.endswith(".localhost"):
        return _refuse(host, EgressReason.LOOPBACK, f"{host} names this machine")
    literal = parse_address(host) or _inet_aton(host)
    candidates = [literal] if literal is not None else list(addresses)
    if not candidates:
        return _refuse(host, EgressReason.UNRESOLVED, f"{host} did not resolve to any address")
    for candidate in candidates:
        refusal = _check_one(host, candidate)
        if refusal is not None:
            return refusal
    return EgressDecision(True, host)


def _check_one(host: str, candidate: str | IPAddress) -> EgressDecision | None:
    address = parse_address(candidate)
    if address is None:
        return _refuse(host, EgressReason.BAD_ADDRESS, f"{candidate!r} is not an IP address")
    reason = classify_address(address)
    if reason is None:
        return None
    if parse_address(host) == address:
        where = f"{host} is"
    elif _inet_aton(host) == address:
        where = f"{host} is {address},"
    else:
        where = f"{host} resolves to {address},"
    return _refuse(host, reason, f"{where} {_DESCRIPTIONS[reason]}")


def parse_address(value: str | IPAddress | None) -> IPAddress | None:
    """``value`` as an IP address; None for anything else (a name, '', None)."""
    if isinstance(value, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        return value
    if not isinstance(value, str):
        return None
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def display_host(url: str) -> str | None:
    """The host of a saved target's URL, the only part ever shown again
    (spec: telephony.md "Notification target" — "a saved target shows only its host")."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return normal_host(host) if host else None


def parse_allow_hosts(text: str | None) -> tuple[str, ...]:
    """The allow list as the administrator writes it (``egress.allow_hosts``): host
    names or IP addresses separated by commas or spaces; raises ``ValueError`` naming
    the first entry that is neither."""
    entries = []
    for raw in (text or "").replace(",", " ").split():
        entry = normal_host(raw)
        if parse_address(entry) is None and not _HOST_NAME.fullmatch(entry):
            raise ValueError(f"{raw!r} is not a host name or an IP address")
        entries.append(entry)
    return tuple(dict.fromkeys(entries))
