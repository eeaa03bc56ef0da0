"""The carrier's webhook signature: Twilio's request-signing algorithm, computed and checked.

A carrier webhook carries ``X-Carrier-Signature`` (``X-Twilio-Signature`` is the same
header under the carrier's own name). The signature covers the URL the carrier
requested and the form parameters it posted:

1. start from the full URL exactly as the carrier holds it: scheme, host, path, query;
2. append, for each parameter name in sorted order, the name followed by each of its
   distinct values in sorted order, with no separators;
3. HMAC-SHA1 that text (UTF-8) with the carrier credential as key; base64 the digest.

Because the URL is part of what is signed, the public address configured here must
match what the carrier holds byte for byte: a trailing slash, or http instead of
https, gives another text and so another signature (spec: telephony.md "Setup:
carrier transport"). Carriers are inconsistent about the default port, so a URL is
also accepted with ``:443``/``:80`` added or removed, as the carrier's own validator
does. Nothing else varies.

Pure: the app reads the body, the header and the credential and asks :func:`verify`.
"""

from __future__ import annotations

__all__ = [
    "FormError",
    "compute_signature",
    "parse_form",
    "signed_text",
    "url_variants",
    "verify",
]

import base64
import hashlib
import hmac
from typing import Iterable, Mapping, Sequence
from urllib.parse import parse_qsl, urlsplit, urlunsplit

Params = Mapping[str, str] | Sequence[tuple[str, str]]


class FormError(ValueError):
    """A webhook body that is not ``application/x-www-form-urlencoded`` text."""


def parse_form(body: bytes) -> list[tuple[str, str]]:
    """The posted parameters in order, repeated names kept; :class:`FormError` for
    anything that is not UTF-8 form encoding."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise FormError("the body is not UTF-8") from None
    try:
        return parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text),
                         encoding="utf-8", errors="strict")
    except (ValueError, UnicodeDecodeError):
        raise FormError("the body is not form-encoded") from None


def _pairs(params: Params) -> Iterable[tuple[str, str]]:
    return params.items() if isinstance(params, Mapping) else params


def signed_text(url: str, params: Params) -> str:
    """The text the carrier signs: the URL, then each name with its values, sorted."""
    values: dict[str, set[str]] = {}
    for name, value in _pairs(params):
        values.setdefault(name, set()).add(value)
    parts = [url]
    for name in sorted(values):
        parts.extend(name + value for value in sorted(values[name]))
    return "".join(parts)


def compute_signature(credential: str, url: str, params: Params) -> str:
    """Base64 of HMAC-SHA1 over :func:`signed_text`, keyed with the credential."""
    digest = hmac.new(credential.encode("utf-8"), signed_text(url, params).encode("utf-8"),
                      hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


_DEFAULT_PORTS = {"https": 443, "http": 80}


def url_variants(url: str) -> tuple[str, ...]:
    """The URL as given, and with its scheme's default port added or removed."""
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket: no other spelling to try
        return (url,)
    default = _DEFAULT_PORTS.get(parts.scheme)
    host = parts.hostname
    if default is None or host is None or "@" in parts.netloc:
        return (url,)
    bare = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        return (url,)
    if port is None:
        other = urlunsplit(parts._replace(netloc=f"{bare}:{default}"))
    elif port == default:
        other = urlunsplit(parts._replace(netloc=bare))
    else:
        return (url,)
    return (url, other)


def verify(credential: str | None, url: str, params: Params, signature: str | None) -> bool:
    """Whether ``signature`` is the carrier's signature of this request.

    No credential or no signature fails: a line without a stored credential refuses
    every call as unsigned (spec: telephony.md "Readiness check", carrier_credential).
    Comparison is in constant time.
    """
    if not credential or not signature:
        return False
    given = signature.strip().encode("ascii", "replace")
    matched = False
    for candidate in url_variants(url):
        expected = compute_signature(credential, candidate, params).encode("ascii")
        matched |= hmac.compare_digest(expected, given)
    return matched
