"""The ways a call to an upstream model server fails, as our own exception types.

What belongs here: the ``UpstreamError`` family the rest of the service catches, and
``map_exceptions``, the single place where aiohttp's exceptions and the core's
``RemoteProtocolError`` become ours. Nothing outside ``adapters.providers`` should need
to know which HTTP client sits underneath.

Each error carries ``status_code``: the status our own ``/v1`` answer should use
(spec: DESIGN.md "/v1 protocol" — 502/504 for upstream failure).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import aiohttp

from core.errors import RemoteProtocolError

__all__ = [
    "UpstreamDisconnected",
    "UpstreamError",
    "UpstreamProtocolError",
    "UpstreamStatusError",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "map_exceptions",
]

# Upstream refusals that are about the caller's request and read the same to our own
# client; anything else (401/403 of our provider key, 5xx) is our gateway's failure.
_PASSED_THROUGH = frozenset({400, 404, 409, 413, 422, 429})


class UpstreamError(Exception):
    """A call to an upstream failed. ``status_code``: what ``/v1`` should answer."""

    status_code = 502

    def __init__(self, message: str, *, upstream: str = "") -> None:
        super().__init__(f"{upstream}: {message}" if upstream else message)
        self.message = message
        self.upstream = upstream


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
    OpenAI-shape body when there is one), ``body`` the start of the raw body.
    """

    def __init__(self, status: int, message: str, body: bytes = b"", *, upstream: str = "") -> None:
        super().__init__(f"HTTP {status}: {message}", upstream=upstream)
        self.status = status
        self.message = message
        self.body = body
        if status in _PASSED_THROUGH:
            self.status_code = status
        elif status == 504:
            self.status_code = 504


@contextmanager
def map_exceptions(upstream: str, *, answering: bool = False) -> Iterator[None]:
    """Turn aiohttp and core protocol errors raised inside into ``UpstreamError``s.

    ``answering`` says the reply has begun, so a broken connection is an
    ``UpstreamDisconnected`` rather than a plain ``UpstreamUnavailable``.
    Cancellation passes through untouched.
    """
    lost = UpstreamDisconnected if answering else UpstreamUnavailable
    try:
        yield
    except TimeoutError as exc:  # aiohttp's ServerTimeoutError family included
        raise UpstreamTimeout(f"timed out: {exc or type(exc).__name__}", upstream=upstream) from exc
    except aiohttp.ClientConnectorError as exc:
        raise UpstreamUnavailable(f"cannot connect: {exc}", upstream=upstream) from exc
    except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, ConnectionError) as exc:
        raise lost(f"connection lost: {exc or type(exc).__name__}", upstream=upstream) from exc
    except (aiohttp.ClientError, RemoteProtocolError) as exc:
        raise UpstreamProtocolError(f"invalid answer: {exc}", upstream=upstream) from exc
