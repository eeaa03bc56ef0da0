"""Refusing state changes that a page on another origin made a browser send.

A browser attaches our session cookie to a request any page sends here, and some
requests need no permission to be sent at all: a form post, a bodiless POST, an upload
as ``text/plain``. SameSite=Lax does not stop a page on another port of the same host,
which is the same site. So a state-changing request that the cookie authenticates must
come from our own origin, as the browser names it: ``Origin`` when sent, else
``Sec-Fetch-Site``. A request with neither comes from no browser (a script holding the
cookie) and is let through.

Requests with ``Authorization: Bearer`` (bearer sessions, which a page elsewhere cannot
send without our consent to its preflight) and without the cookie (signed carrier and
pbx webhooks) are not the browser's doing and are not judged here.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from blacksheep import Request, Response

from app.errors import Forbidden
from app.http.guards import bearer_token
from app.services.sessions import COOKIE_NAME

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_SAME_ORIGIN_FETCH = frozenset({b"same-origin", b"none"})


def cross_origin(request: Request, public_url: str) -> bool:
    """Whether the browser says another origin sent this. Our own origin is the address
    the request came to, or ``server.public_url`` behind a proxy that rewrites Host."""
    origin = request.get_first_header(b"origin")
    if origin is not None:
        ours = {(request.get_first_header(b"host") or b"").decode("latin-1"),
                urlsplit(public_url).netloc}
        # "null" (a sandboxed frame, a redirect across origins) is never ours.
        return origin.decode("latin-1").split("://", 1)[-1] not in ours
    fetch_site = request.get_first_header(b"sec-fetch-site")
    return fetch_site is not None and fetch_site.lower() not in _SAME_ORIGIN_FETCH


def cookie_authenticated(request: Request) -> bool:
    """Whether the cookie is what identifies the caller, as the guards decide it. Any
    other ``Authorization`` (Basic, which a browser adds by itself to every request to a
    host behind a password-protected proxy) leaves the cookie in charge."""
    return bearer_token(request) is None and bool(request.cookies.get(COOKIE_NAME))


class SameOriginWrites:
    """Middleware: 403 ``cross_origin`` for a cookie-authenticated state change sent
    from another origin, before any handler reads it."""

    def __init__(self, public_url: str) -> None:
        self.public_url = public_url

    async def __call__(self, request: Request, handler) -> Response:
        if (request.method in STATE_CHANGING and cookie_authenticated(request)
                and cross_origin(request, self.public_url)):
            raise Forbidden("This change must come from this server's own pages.",
                            code="cross_origin")
        return await handler(request)
