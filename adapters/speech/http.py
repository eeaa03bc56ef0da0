"""HTTP for the remote speech engines: one connection pool, one way to fail.

What belongs here: ``SpeechHttp`` (an aiohttp session the engines of every call share,
so a call does not pay a new TLS handshake per sentence), ``request`` (send, check the
status, always let go of the response), ``gated_request`` (the same through the egress
gate, for the turn detector) and ``map_exceptions``, where aiohttp's errors
become ``SpeechUnavailable`` with a sentence an operator can act on. What the bodies
mean is the engines' business (``openai.py``, ``turns.py``).
"""

from __future__ import annotations

__all__ = ["Endpoint", "SpeechHttp", "gated_request", "map_exceptions"]

import json
import logging
from collections.abc import AsyncIterator, Collection, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import field
from typing import Any

import aiohttp

from adapters.egress_http import EgressRefused, allowing, gated_session, precheck
from adapters.session_pool import LazySession
from adapters.speech.base import SpeechTimeouts, SpeechUnavailable
from core.host_port import url_host
from core.records import frozen
from core.redaction import redact

_MAX_ERROR_BYTES = 16 * 1024
log = logging.getLogger("svc.speech")
#: The outer bound of a gated session; each request brings its own, shorter, timeouts.
_GATED_CEILING_SECONDS = 60.0


@frozen
class Endpoint:
    """A remote engine: its OpenAI-compatible base URL (``.../v1``) or, for the turn
    detector, its whole URL; the key, or None for keyless local servers."""

    url: str
    #: kept out of ``repr``: an engine's key must not reach a log line
    api_key: str | None = field(default=None, repr=False)

    def at(self, path: str) -> str:
        return f"{self.url.rstrip('/')}/{path}" if path else self.url

    @property
    def label(self) -> str:
        """How messages name the engine: its host, never its key, path or a user and
        password written into the URL."""
        return url_host(self.url) or self.url

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}


@contextmanager
def map_exceptions(engine: str) -> Iterator[None]:
    """aiohttp's failures (and time-outs) raised inside become ``SpeechUnavailable``,
    told in words an operator reads in the console; aiohttp's own text (addresses,
    ``ssl:default``, errno) goes to the log. Cancellation passes through untouched."""
    try:
        yield
    except SpeechUnavailable:
        raise
    except TimeoutError as exc:  # aiohttp's ServerTimeoutError included
        raise _unavailable("did not answer in time", engine, exc) from exc
    except aiohttp.ClientConnectorError as exc:
        raise _unavailable("cannot connect: it could not be reached", engine, exc) from exc
    except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, ConnectionError) as exc:
        raise _unavailable("the connection broke before the answer was complete", engine,
                           exc) from exc
    except aiohttp.ClientError as exc:
        raise _unavailable("answered something that could not be read", engine, exc) from exc


def _unavailable(words: str, engine: str, exc: BaseException) -> SpeechUnavailable:
    log.warning("speech engine failed", extra={"engine": engine,
                                               "detail": f"{type(exc).__name__}: {exc}"})
    return SpeechUnavailable(words, engine=engine)


def _error_message(body: bytes) -> str:
    """What the engine said went wrong: the message of an OpenAI error body
    (``{"error": {"message": ...}}``), of a FastAPI one as Kokoro-FastAPI and speaches
    answer (``{"detail": ...}``), else the start of the body."""
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if isinstance(answer, dict):
        message = _said(answer.get("error")) or _detail(answer.get("detail"))
        if message:
            return message[:300]
    return body[:200].decode("utf-8", "replace").strip() or "no explanation"


def _said(error: Any) -> str | None:
    """OpenAI's ``error``: an object with a ``message``, or (some servers) the text."""
    message = error.get("message") if isinstance(error, dict) else error
    return message if isinstance(message, str) and message else None


def _detail(detail: Any) -> str | None:
    """FastAPI's ``detail``: the text of an HTTPException, an object with a ``message``
    (Kokoro-FastAPI), or a 422's list of ``{"loc": [...], "msg": ...}`` (a field that is
    missing or wrong, named by where it is: ``body.model: Field required``)."""
    if isinstance(detail, list):
        problems = [_problem(item) for item in detail
                    if isinstance(item, dict) and isinstance(item.get("msg"), str)]
        return "; ".join(problems) or None
    return _said(detail)


def _problem(item: dict) -> str:
    where = ".".join(str(part) for part in item.get("loc") or [])
    return f"{where}: {item['msg']}" if where else item["msg"]


def _status_message(status: int, body: bytes, key: str | None) -> str:
    """The engine's refusal, without any quote of the key it was sent."""
    message = redact(_error_message(body), [key], "[key]")
    if status in (401, 403):
        return f"refused the key (HTTP {status}): {message}"
    return f"answered HTTP {status}: {message}"


class SpeechHttp(LazySession):
    """Pooled connections to the speech engines, one per process and event loop.

    Engines built without one open a session per request instead: correct, but each
    request pays for a new connection. Call ``aclose()`` (or ``async with``) at the end.
    """

    def __init__(self, *, max_connections: int = 256) -> None:
        self._max_connections = max_connections

    _gated: aiohttp.ClientSession | None = None

    def _new_session(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(limit=self._max_connections, ttl_dns_cache=60)
        return aiohttp.ClientSession(connector=connector)

    def _gated_session(self) -> aiohttp.ClientSession:
        """The session of the requests that pass the egress gate (its connections are
        never kept alive, so they cannot share the pool)."""
        self._get_session()  # refuses use after close, like the pool
        if self._gated is None:
            self._gated = gated_session(timeout_seconds=_GATED_CEILING_SECONDS)
        return self._gated

    async def aclose(self) -> None:
        await super().aclose()
        if self._gated is not None:
            await self._gated.close()
            self._gated = None

    @asynccontextmanager
    async def request(self, endpoint: Endpoint, path: str, timeouts: SpeechTimeouts,
                      **kwargs: Any) -> AsyncIterator[aiohttp.ClientResponse]:
        """POST to the engine; yields a response whose status is 2xx."""
        async with _request(self._get_session(), endpoint, path, timeouts, kwargs) as response:
            yield response


@asynccontextmanager
async def request(http: SpeechHttp | None, endpoint: Endpoint, path: str,
                  timeouts: SpeechTimeouts, **kwargs: Any) -> AsyncIterator[aiohttp.ClientResponse]:
    """POST through ``http``'s pool, or through a session of its own when None."""
    if http is not None:
        async with http.request(endpoint, path, timeouts, **kwargs) as response:
            yield response
        return
    async with aiohttp.ClientSession() as session:
        async with _request(session, endpoint, path, timeouts, kwargs) as response:
            yield response


@asynccontextmanager
async def gated_request(http: SpeechHttp | None, endpoint: Endpoint, path: str,
                        timeouts: SpeechTimeouts, allow_hosts: Collection[str],
                        **kwargs: Any) -> AsyncIterator[aiohttp.ClientResponse]:
    """``request`` through the egress gate with the administrator's ``allow_hosts``:
    for a URL typed into the settings, which must not reach this machine or its
    network unless allowed (spec: telephony.md "Outward notifications" — the same
    gate as other connectors)."""
    url = endpoint.at(path)
    try:
        precheck(url, allow_hosts)
        with allowing(allow_hosts):
            if http is not None:
                async with _request(http._gated_session(), endpoint, path, timeouts,
                                    kwargs) as response:
                    yield response
                return
            async with gated_session(timeout_seconds=_GATED_CEILING_SECONDS) as session:
                async with _request(session, endpoint, path, timeouts, kwargs) as response:
                    yield response
    except EgressRefused as refused:
        raise SpeechUnavailable(f"its address is not allowed: {refused.decision.detail}",
                                engine=endpoint.label) from None


@asynccontextmanager
async def _request(session: aiohttp.ClientSession, endpoint: Endpoint, path: str,
                   timeouts: SpeechTimeouts,
                   kwargs: dict[str, Any]) -> AsyncIterator[aiohttp.ClientResponse]:
    timeout = aiohttp.ClientTimeout(total=None, connect=timeouts.connect,
                                    sock_connect=timeouts.connect, sock_read=timeouts.read)
    with map_exceptions(endpoint.label):
        response = await session.post(endpoint.at(path), headers=endpoint.headers(),
                                      timeout=timeout, allow_redirects=False, **kwargs)
    try:
        if response.status >= 300:
            with map_exceptions(endpoint.label):
                body = await response.content.read(_MAX_ERROR_BYTES)
            raise SpeechUnavailable(_status_message(response.status, body, endpoint.api_key),
                                    engine=endpoint.label, status=response.status)
        yield response
    except BaseException:
        # Left early (barge-in, cancellation, an error): close the connection rather
        # than return it to the pool, so the engine stops working for nobody.
        response.close()
        raise
    response.release()
