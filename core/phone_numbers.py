"""Telephone numbers and the source addresses allowed to ask pbx questions.

``normalise_e164`` is the rule for a line's ``e164`` and ``transfer_e164`` fields;
``is_private_source`` is the network half of the gate on the pbx HTTP questions (the
shared secret is the other half and lives with the app). Both are pure.
"""

from __future__ import annotations

import ipaddress
import re

__all__ = ["InvalidPhoneNumber", "is_private_source", "normalise_e164"]

# spec: telephony.md "Line" — "Spaces, dashes, brackets and dots are stripped". Any
# whitespace counts as a space: numbers pasted from documents carry non-breaking ones.
_SEPARATORS = re.compile(r"[\s\-().]")

# "+ then 7 to 15 digits, first digit not 0"; ASCII digits only.
_E164 = re.compile(r"\+[1-9][0-9]{6,14}")

_INTERNATIONAL_PREFIX = "00"


class InvalidPhoneNumber(ValueError):
    """A number that is not E.164 after normalisation. ``value`` is what was given."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__(f"{value!r} is not a telephone number in E.164 form: {reason}")
        self.value = value
        self.reason = reason


def normalise_e164(value: str) -> str:
    """Return ``value`` as ``+`` and digits, or raise ``InvalidPhoneNumber``.

    spec: telephony.md "Line" — separators are stripped and a leading ``00`` becomes
    ``+``; the result must be ``+`` then 7 to 15 digits, the first not 0.
    """
    number = _SEPARATORS.sub("", value)
    if number.startswith(_INTERNATIONAL_PREFIX):
        number = "+" + number[len(_INTERNATIONAL_PREFIX) :]
    if _E164.fullmatch(number) is None:
        raise InvalidPhoneNumber(value, _reason(number))
    return number


def _reason(number: str) -> str:
    digits = number[1:]
    if not number.startswith("+"):
        return "it must start with + or 00"
    if digits and not (digits.isascii() and digits.isdigit()):
        return "only digits may follow the +, besides spaces, dashes, brackets and dots"
    if digits.startswith("0"):
        return "the country code cannot start with 0"
    return f"it must have 7 to 15 digits, not {len(digits)}"


# Networks of the operator's own telephone system. spec: telephony.md "Authentication"
# — the pbx questions need "a private source address": loopback, RFC 1918 and IPv6
# unique-local. Link-local, carrier-grade NAT and documentation ranges are not.
_PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(network)
    for network in (
        "127.0.0.0/8",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "::1/128",
        "fc00::/7",
    )
)


def is_private_source(
    address: str | ipaddress.IPv4Address | ipaddress.IPv6Address | None,
) -> bool:
    """Whether a request's source address is on the operator's own network.

    An IPv4-mapped IPv6 address (``::ffff:10.0.0.1``) is judged by its IPv4 address.
    Anything that is not an IP address — empty, a host name, a Unix socket path,
    ``None`` — is not private: the gate fails closed.
    """
    parsed = _parse(address)
    if parsed is None:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return any(parsed in network for network in _PRIVATE_NETWORKS)


def _parse(
    address: str | ipaddress.IPv4Address | ipaddress.IPv6Address | None,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if isinstance(address, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        return address
    if not isinstance(address, str):
        return None
    try:
        return ipaddress.ip_address(address)
    except ValueError:
        return None
