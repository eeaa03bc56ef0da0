"""The refusals services raise, with nothing of the web in them.

A refusal says what went wrong in terms a client can act on: a stable ``code`` to
branch on, a ``message`` a person can read, the ``field`` at fault when there is one,
and ``retry_after`` (whole seconds) when waiting will help. Its kind is its class: a
thing that is not there (or not the caller's) is ``NotFound``, a change that clashes
with what is stored is ``Conflict``, and so on.

How a kind is answered — its HTTP status, a ``Retry-After`` header, our JSON shape or
the OpenAI one — is decided in one place, ``app.http.errors``; nothing here imports the
web framework, so the CLI and the call tools can catch these as well as the routes.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError", "BadRequest", "Conflict", "Forbidden", "NotFound", "PayloadTooLarge",
    "ServiceUnavailable", "TooManyRequests", "Unauthorized", "UnsupportedMediaType",
    "Unprocessable", "UpstreamFailed",
]


class ApiError(Exception):
    """A request refused. The base of every refusal; by itself, a request that is wrong
    in a way no narrower kind names."""

    code = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        field: str | None = None,
        retry_after: int | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.code
        self.field = field
        self.retry_after = retry_after
        #: every field refused when one request checks several ({field, code, message})
        self.errors = errors


class BadRequest(ApiError):
    """The request could not be read (a body that is not JSON)."""

    code = "bad_request"


class Unauthorized(ApiError):
    """The caller is not known: no credentials, or wrong ones."""

    code = "unauthorized"


class NotFound(ApiError):
    """Also the answer for what exists but is not the caller's: existence is not leaked."""

    code = "not_found"

    def __init__(self, message: str = "Not found.", **kwargs: Any) -> None:
        super().__init__(message, **kwargs)


class Forbidden(ApiError):
    """The caller is known but may not do this."""

    code = "forbidden"


class Conflict(ApiError):
    """The request is well formed but clashes with what is stored or switched on."""

    code = "conflict"


class PayloadTooLarge(ApiError):
    """What was sent is larger than the service takes."""

    code = "payload_too_large"


class UnsupportedMediaType(ApiError):
    """What was sent is of a kind the service does not read."""

    code = "unsupported_media_type"


class Unprocessable(ApiError):
    """A value the service read and refuses; ``field`` names it."""

    code = "invalid_value"


class TooManyRequests(ApiError):
    """Slowed down: ``retry_after`` says for how long."""

    code = "too_many_requests"


class UpstreamFailed(ApiError):
    """A server the service relies on (a provider's model server) failed or refused."""

    code = "upstream_error"


class ServiceUnavailable(ApiError):
    """The service cannot do this now; trying again later may work."""

    code = "unavailable"
