"""The ways a call to an upstream model server fails, as our own exception types.

What belongs here: the ``UpstreamError`` family the rest of the service catches, and
``map_exceptions``, the single place where the HTTP client's exceptions (``http1``)
and the core's ``RemoteProtocolError`` become ours. Nothing outside
``adapters.providers`` should need to know which HTTP client sits underneath.

Each error carries ``status_code``: the status our own ``/v1`` answer should use
(spec: DESIGN.md "/v1 protocol" — 502/504 for upstream failure).

What an error says (``str(error)``, ``public``) is for the people who called: what
happened, in their words ("the provider could not be reached"), never the client
library's own text (``ClientConnectorError``, ``ssl:default``, addresses). That text
goes to the log, with the request id, when the failure is mapped (``detail``).
"""

from __future__ import annotations

__all__ = [
    "UpstreamDisconnected",
    "UpstreamError",
    "UpstreamProtocolError",
    "UpstreamStatusError",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "map_exceptions",
]

import logging
from types import TracebackType

from adapters.providers.http1 import ConnectFailed, InvalidRequest
from core.errors import RemoteProtocolError

# Upstream refusals that are about the caller's request and read the same to our own
# client; anything else (401/403 of our provider key, 5xx) is our gateway's failure.
_PASSED_THROUGH = frozenset({400, 404, 409, 413, 422, 429})

log = logging.getLogger("svc.providers")


class UpstreamError(Exception):
    """A call to an upstream failed. ``status_code``: what ``/v1`` should answer;
    ``message``: what happened, in words its caller understands; ``detail``: the
    technical cause, for the log only."""

    status_code = 502

    def __init__(self, message: str, *, upstream: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.upstream = upstream
        self.detail = detail

    @property
    def public(self) -> str:
        """What may be shown to whoever made the call."""
        return self.message

    def __str__(self) -> str:
        return f"{self.upstream}: {self.public}" if self.upstream else self.public


class UpstreamUnavailable(UpstreamError):
    """No answer could be had: connection refused, DNS failure, reset before a reply."""


class UpstreamDisconnected(UpstreamUnavailable):
    """The connection broke after the answer began; part of it was already received,
    so a retry would repeat output the caller may have relayed."""


class UpstreamTimeout(UpstreamError):
    """Connecting took longer than the connect timeout, or the upstream went silent
    for longer than the read timeout."""

    status_code = 504


class UpstreamProtocolError(UpstreamError):
    """The upstream answered something that is not the protocol: not HTTP, not JSON,
    a broken event stream, a stream that ends before its last chunk."""


class UpstreamStatusError(UpstreamError):
    """The upstream refused with an HTTP error status (or an in-stream error frame).

    ``status`` is the upstream's own status, ``message`` its error message (from the
    OpenAI-shape body when there is one), ``body`` the start of the raw body;
    ``callers_key`` whether the key it refused was the caller's own.
    """

    def __init__(self, status: int, message: str, body: bytes = b"", *, upstream: str = "",
                 callers_key: bool = False) -> None:
        super().__init__(message, upstream=upstream, detail=f"HTTP {status}: {message}")
        self.status = status
        self.body = body
        self.callers_key = callers_key
        if status in _PASSED_THROUGH:
            self.status_code = status
        elif status == 504:
            self.status_code = 504

    @property
    def public(self) -> str:
        """The upstream's own message when it is about the caller's request (which the
        caller may fix); otherwise only what happened: the failure is ours."""
        if self.status in _PASSED_THROUGH:
            return f"HTTP {self.status}: {self.message}"
        if self.status in (401, 403) and self.callers_key:
            return (f"the provider refused your own key for it (HTTP {self.status}); "
                    "replace or remove it under Profile, Provider keys")
        if self.status in (401, 403):
            return f"the provider refused the service's credentials (HTTP {self.status})"
        return f"the provider answered with an error (HTTP {self.status})"


class map_exceptions:  # noqa: N801 - used as a function: ``with map_exceptions(...)``
    """Turn the HTTP client's and core protocol errors raised inside into
    ``UpstreamError``s.

    ``answering`` says the reply has begun, so a broken connection is an
    ``UpstreamDisconnected`` rather than a plain ``UpstreamUnavailable``.
    Cancellation passes through untouched. A class rather than a generator-based
    context manager: a relayed stream enters one for every read.
    """

    __slots__ = ("upstream", "answering")

    def __init__(self, upstream: str, *, answering: bool = False) -> None:
        self.upstream, self.answering = upstream, answering

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> bool:
        if exc is None:
            return False
        upstream = self.upstream
        if isinstance(exc, TimeoutError):
            raise _mapped(UpstreamTimeout, "the provider did not answer in time", upstream,
                          exc) from exc
        if isinstance(exc, ConnectFailed):
            raise _mapped(UpstreamUnavailable, "the provider could not be reached", upstream,
                          exc) from exc
        if isinstance(exc, ConnectionError):
            lost = UpstreamDisconnected if self.answering else UpstreamUnavailable
            words = ("the provider's answer was cut off" if self.answering
                     else "the connection to the provider broke before it answered")
            raise _mapped(lost, words, upstream, exc) from exc
        if isinstance(exc, (RemoteProtocolError, InvalidRequest)):
            raise _mapped(UpstreamProtocolError, "the provider's answer could not be read",
                          upstream, exc) from exc
        return False


def _mapped(kind: type[UpstreamError], words: str, upstream: str,
            exc: BaseException) -> UpstreamError:
    """The error the caller sees; the library's own account of it goes to the log."""
    detail = f"{type(exc).__name__}: {exc}"
    log.warning("upstream call failed", extra={"upstream": upstream, "detail": detail})
    return kind(words, upstream=upstream, detail=detail)
