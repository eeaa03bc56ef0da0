"""Who calls ``/v1``, and whether their key may make this request now.

``api_caller`` turns ``Authorization: Bearer <key>`` into the key's user (401
``invalid_api_key`` otherwise, showing only a masked key). ``admit`` counts the request
against the key's per-minute limit (``api.rate_per_min``) once the request is known to
be valid, so refused requests never use up the quota.
"""

from __future__ import annotations

from blacksheep import Request

from app.bundle import Services
from app.errors import Unauthorized
from app.http.errors import HttpRefusal
from app.services.accounts import Identity
from app.services.api_keys import masked
from core import ratelimit


class InvalidApiKey(Unauthorized, code="invalid_api_key"):
    """No key was sent, or the one sent is unknown, revoked or expired."""


class RateLimited(HttpRefusal, code="rate_limit_exceeded"):
    """429 with the key's rate-limit headers (``core.ratelimit.headers``)."""

    status = 429


def bearer_value(request: Request) -> str | None:
    header = request.get_first_header(b"authorization")
    if not header:
        return None
    scheme, _, value = header.decode("latin-1").partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


async def api_caller(request: Request, svc: Services) -> Identity:
    value = bearer_value(request)
    if value is None:
        raise InvalidApiKey("You didn't provide an API key. Send it as "
                            "'Authorization: Bearer <key>'; mint one in your profile.")
    identity = await svc.api_keys.identify(value)
    if identity is None:
        raise InvalidApiKey(f"Incorrect API key provided: {masked(value)}. It is unknown, "
                            "revoked or expired; mint a new one in your profile.")
    request.caller = identity  # type: ignore[attr-defined]
    return identity


async def admit(svc: Services, identity: Identity) -> dict[str, str]:
    """Count the request; return the rate-limit headers, or raise 429 with them."""
    assert identity.api_key_id is not None
    limit = await svc.settings.get("api.rate_per_min")
    decision = await svc.api_keys.consume(identity.api_key_id, limit)
    headers = ratelimit.headers(decision)
    if not decision.allowed:
        raise RateLimited(f"Rate limit reached: {limit} requests per minute for this key. "
                          f"Try again in {decision.retry_after} s.", headers=headers)
    return headers
