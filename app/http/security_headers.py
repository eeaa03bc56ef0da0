"""The headers every HTML page of ours carries: the console's and the API document's.

Scripts and styles come only from this server (no inline script, nothing from a CDN);
nothing may frame a page.
"""

from __future__ import annotations

from blacksheep import Response

SECURITY_HEADERS = (
    (b"Content-Security-Policy",
     b"default-src 'self'; img-src 'self' data:; media-src 'self' blob:; "
     b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"X-Content-Type-Options", b"nosniff"),
    (b"Referrer-Policy", b"same-origin"),
    (b"Cache-Control", b"no-store"),
)


def secured(response: Response) -> Response:
    for name, value in SECURITY_HEADERS:
        response.headers[name] = value
    return response
