"""How errors become responses.

Services and routes raise the refusals of ``app.errors`` (``ApiError`` and its kinds);
this module alone knows their HTTP status (``STATUS``) and headers, and the handlers
registered here render ``{"error": {"code", "message", "field"}}`` with that status.
``HttpRefusal`` is for the web layer's own refusals that carry a status and headers
of their own. Anything else that escapes a route is logged with the request id, its
class and where it was raised (not its message, which may quote a query's values) and
answered with a bare 500 in the same shape, never a stack trace — except a database that cannot be reached, which is 503 with
``Retry-After`` (the OpenAI shape under ``/v1``, like every error there).
"""

from __future__ import annotations

import json
import logging
import traceback
from typing import Any

from blacksheep import Content, Request, Response
from blacksheep.exceptions import HTTPException

from app.db import is_unavailable
from app.errors import (ApiError, BadRequest, Conflict, Forbidden, NotFound, PayloadTooLarge,
                        ServiceUnavailable, TooManyRequests, Unauthorized, UnsupportedMediaType,
                        Unprocessable, UpstreamFailed)

log = logging.getLogger("svc.http")


#: Each kind of refusal's status; a subclass takes its nearest listed ancestor's.
STATUS: dict[type[ApiError], int] = {
    ApiError: 400,
    BadRequest: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    PayloadTooLarge: 413,
    UnsupportedMediaType: 415,
    Unprocessable: 422,
    TooManyRequests: 429,
    UpstreamFailed: 502,
    ServiceUnavailable: 503,
}


class HttpRefusal(ApiError):
    """A refusal the web layer words itself, with a status and headers of its own: an
    upstream's status relayed under ``/v1``, a key's rate-limit headers."""

    status = 400

    def __init__(self, message: str, *, status: int | None = None,
                 headers: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.status = status or self.status
        self.headers = headers or {}


def status_of(error: ApiError) -> int:
    """The HTTP status ``error`` is answered with."""
    if isinstance(error, HttpRefusal):
        return error.status
    return next(STATUS[kind] for kind in type(error).__mro__ if kind in STATUS)


def headers_of(error: ApiError) -> dict[str, str]:
    """The headers ``error``'s response carries: ``Retry-After`` when waiting helps."""
    headers = dict(error.headers) if isinstance(error, HttpRefusal) else {}
    if error.retry_after is not None:
        headers["Retry-After"] = str(error.retry_after)
    return headers


def json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    return encoded_json_response(status, body, headers)


def header_pairs(headers: dict[str, str] | None) -> list[tuple[bytes, bytes]] | None:
    """Headers of distinct names as a response is made with them: given at once rather
    than set one by one on the made response (each set looks for the name first)."""
    return [(name.encode(), value.encode()) for name, value in headers.items()] \
        if headers else None


def encoded_json_response(status: int, body: bytes,
                          headers: dict[str, str] | None = None) -> Response:
    """A response of JSON already encoded (an upstream's answer relayed as it came)."""
    return Response(status, header_pairs(headers), Content(b"application/json", body))


def error_body(code: str, message: str, field: str | None = None,
               errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message, "field": field}
    if errors:
        body["errors"] = errors
    return {"error": body}


_OPENAI_TYPES = {401: "invalid_request_error", 403: "permission_error", 429: "requests"}


def openai_error_body(status: int, code: str, message: str, param: str | None) -> dict[str, Any]:
    """The chat-completions protocol's error shape, which the OpenAI SDKs parse."""
    kind = _OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def render_error(request: Request, status: int, code: str, message: str,
                 field: str | None = None, headers: dict[str, str] | None = None,
                 errors: list[dict[str, Any]] | None = None) -> Response:
    """Our shape under /api, the OpenAI shape under /v1."""
    if request.url.path.startswith(b"/v1"):
        return json_response(status, openai_error_body(status, code, message, field), headers)
    return json_response(status, error_body(code, message, field, errors), headers)


def error_response(request: Request, error: ApiError) -> Response:
    """The response a refusal becomes, in the shape of the path it answers."""
    return render_error(request, status_of(error), error.code, error.message, error.field,
                        headers_of(error), error.errors)


async def _on_api_error(app: Any, request: Request, error: ApiError) -> Response:
    return error_response(request, error)


async def _on_http_exception(app: Any, request: Request, error: HTTPException) -> Response:
    # BlackSheep's own refusals (e.g. an unmatched method) get our shape too.
    code = {404: "not_found", 405: "method_not_allowed"}.get(error.status, "bad_request")
    return render_error(request, error.status, code, str(error) or code.replace("_", " "))


async def _on_unhandled(app: Any, request: Request, error: Exception) -> Response:
    cause = getattr(error, "source_error", None) or error
    if is_unavailable(cause):
        # The database stopped or is out of reach: a condition to wait out, not a bug.
        log.warning("database unavailable", extra={"error": type(cause).__name__})
        return render_error(request, 503, "database_unavailable",
                            "The service cannot reach its database; try again shortly.",
                            headers={"Retry-After": "5"})
    # The class and where it was raised, never its message: a driver's error quotes the
    # values of the failed query (a chat's text, an email address).
    log.error("unhandled error", extra={
        "error": type(cause).__name__,
        "request_id": getattr(request, "request_id", None),
        "where": "".join(traceback.format_tb(cause.__traceback__)),
    })
    return render_error(request, 500, "internal_error", "Something went wrong on our side.")


def configure_errors(app: Any) -> None:
    # BlackSheep logs every error it hands to a handler; ours log what matters, once.
    app.logger.setLevel(logging.CRITICAL)
    app.exceptions_handlers[ApiError] = _on_api_error
    for status in (400, 404, 405):
        app.exceptions_handlers[status] = _on_http_exception
    app.exceptions_handlers[500] = _on_unhandled
