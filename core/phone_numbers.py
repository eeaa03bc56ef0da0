"""Telephone numbers and the source addresses allowed to ask pbx questions.

``normalise_e164`` is the rule for a line's ``e164`` and ``transfer_e164`` fields, the
number dialled and the caller's; ``is_private_source`` is the network half of the gate
on the pbx HTTP questions (the shared secret is the other half and lives with the
app). Both are pure: national numbers are read with the ``phonenumbers`` library, whose
numbering plans ship inside the package (no I/O beyond its own data, no clock).
"""

from __future__ import annotations

__all__ = ["InvalidPhoneNumber", "is_private_source", "is_region", "normalise_e164"]

import ipaddress
import re

import phonenumbers

from .egress import parse_address

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


def is_region(value: str) -> bool:
    """Whether ``value`` is a region whose numbering plan is known (``GB``, ``US``)."""
    return value in phonenumbers.SUPPORTED_REGIONS


def normalise_e164(value: str, region: str | None = None) -> str:
    """Return ``value`` as ``+`` and digits, or raise ``InvalidPhoneNumber``.

    spec: telephony.md "Line" — separators are stripped and a leading ``00`` becomes
    ``+``; the result must be ``+`` then 7 to 15 digits, the first not 0. With a
    ``region`` (``telephony.default_region``), digits without ``+`` are read as that
    region dials them: ``01632 960002``, ``441632960002`` (what a trunk often puts in
    Asterisk's ``${EXTEN}``) and the region's international prefix alike.
    """
    number = _SEPARATORS.sub("", value)
    if number.startswith(_INTERNATIONAL_PREFIX):
        number = "+" + number[len(_INTERNATIONAL_PREFIX) :]
    elif region and number.isascii() and number.isdigit():
        number = _in_region(value, number, region)
    if _E164.fullmatch(number) is None:
        raise InvalidPhoneNumber(value, _reason(number, region))
    return number


def _in_region(value: str, digits: str, region: str) -> str:
    try:
        parsed = phonenumbers.parse(digits, region)
    except phonenumbers.NumberParseException:
        parsed = None
    if parsed is None or not phonenumbers.is_possible_number(parsed):
        raise InvalidPhoneNumber(value, f"it is not a number that can be dialled in {region}")
    return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)


def _reason(number: str, region: str | None = None) -> str:
    digits = number[1:]
    if not number.startswith("+"):
        if region is None:
            return ("it must start with + or 00 (or set telephony.default_region to read "
                    "national numbers)")
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
    parsed = parse_address(address)
    if parsed is None:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return any(parsed in network for network in _PRIVATE_NETWORKS)
