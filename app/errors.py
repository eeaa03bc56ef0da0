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

__all__ = [
    "ApiError", "BadRequest", "Conflict", "Forbidden", "NotFound", "PayloadTooLarge",
    "ServiceUnavailable", "TooManyRequests", "Unauthorized", "UnsupportedMediaType",
    "Unprocessable", "UpstreamFailed",
]

from typing import Any


class ApiError(Exception):
    """A request refused. The base of every refusal; by itself, a request that is wrong
    in a way no narrower kind names."""

    code = "bad_request"

    def __init_subclass__(cls, code: str | None = None, **kwargs: Any) -> None:
        """A kind names its default ``code`` in its heading; without one it keeps its
        parent's."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

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


class BadRequest(ApiError, code="bad_request"):
    """The request could not be read (a body that is not JSON)."""


class Unauthorized(ApiError, code="unauthorized"):
    """The caller is not known: no credentials, or wrong ones."""


class NotFound(ApiError, code="not_found"):
    """Also the answer for what exists but is not the caller's: existence is not leaked."""

    def __init__(self, message: str = "Not found.", **kwargs: Any) -> None:
        super().__init__(message, **kwargs)


class Forbidden(ApiError, code="forbidden"):
    """The caller is known but may not do this."""


class Conflict(ApiError, code="conflict"):
    """The request is well formed but clashes with what is stored or switched on."""


class PayloadTooLarge(ApiError, code="payload_too_large"):
    """What was sent is larger than the service takes."""


class UnsupportedMediaType(ApiError, code="unsupported_media_type"):
    """What was sent is of a kind the service does not read."""


class Unprocessable(ApiError, code="invalid_value"):
    """A value the service read and refuses; ``field`` names it."""


class TooManyRequests(ApiError, code="too_many_requests"):
    """Slowed down: ``retry_after`` says for how long."""


class UpstreamFailed(ApiError, code="upstream_error"):
    """A server the service relies on (a provider's model server) failed or refused."""


class ServiceUnavailable(ApiError, code="unavailable"):
    """The service cannot do this now; trying again later may work."""
