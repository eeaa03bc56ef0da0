"""The public API's switch and its CORS, decided per request from runtime settings.

``features.public_api`` off: every ``/v1`` path and key management answer 404, as if
they did not exist. ``api.cors_allow_all`` on: browser preflights to ``/v1`` are
answered without a key, the allowed headers echo what the browser asks for, and our
own headers (chat id, rate limits, request id) are exposed; off: no CORS header at all.
"""

from __future__ import annotations

from blacksheep import Request, Response

from app.bundle import Services
from app.http.errors import render_error

EXPOSED = ("X-Service-Chat-Id, x-request-id, x-ratelimit-limit-requests, "
           "x-ratelimit-remaining-requests, x-ratelimit-reset-requests, Retry-After, "
           "x-should-retry")


def _is_public_api(path: bytes) -> bool:
    return path.startswith(b"/v1/") or path == b"/v1" or b"/api-keys" in path


def _cors_headers(request: Request, response: Response) -> None:
    origin = request.get_first_header(b"origin")
    if origin is None:
        return
    response.headers[b"access-control-allow-origin"] = origin
    response.headers[b"vary"] = b"Origin"
    response.headers[b"access-control-expose-headers"] = EXPOSED.encode()


def _preflight(request: Request) -> Response:
    response = Response(204)
    asked = request.get_first_header(b"access-control-request-headers")
    response.headers[b"access-control-allow-methods"] = b"GET, POST, OPTIONS"
    response.headers[b"access-control-allow-headers"] = asked or b"authorization, content-type"
    response.headers[b"access-control-max-age"] = b"600"
    _cors_headers(request, response)
    # The answer depends on what was asked, so caches must key on it too.
    response.headers[b"vary"] = (b"Origin, Access-Control-Request-Method, "
                                 b"Access-Control-Request-Headers")
    return response


class PublicApiGate:
    def __init__(self, app, services: Services) -> None:
        self.app = app
        self.services = services

    async def __call__(self, request: Request, handler) -> Response:
        path = request.url.path
        if not _is_public_api(path):
            return await handler(request)
        snapshot = await self.services.settings.snapshot()
        if not snapshot["features.public_api"]:
            return render_error(request, 404, "not_found", "Not found.")
        cors = path.startswith(b"/v1") and snapshot["api.cors_allow_all"]
        if cors and request.method == "OPTIONS" and request.get_first_header(
                b"access-control-request-method"):
            return _preflight(request)
        try:
            response = await handler(request)
        except Exception as exc:  # rendered here so refusals carry CORS headers too
            response = await self.app.handle_request_handler_exception(request, exc)
        if cors:
            _cors_headers(request, response)
        return response
