"""The one HTTP client for OpenAI-compatible upstreams (OpenAI, Ollama, vLLM, llama.cpp).

What belongs here: the connection pool, the request to an upstream, the status check,
and opening and closing responses — above all closing them when the caller is
cancelled. Reading the bodies is in ``streams.py``, the error types in ``errors.py``,
and what the payloads mean in ``core.sse``.

Built on ``http1``, a lean HTTP/1.1 client over httptools: aiohttp's client, which
measured about 8x httpx relaying through BlackSheep (spec: DESIGN.md "Real
components"), spent more than twice its CPU per call (``benchmarks/upstream_clients.py``
re-measures all three).
"""

from __future__ import annotations

__all__ = ["ProviderClient", "Timeouts", "Upstream"]

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from types import TracebackType
from dataclasses import field
from typing import Any, AnyStr

from adapters.providers.errors import (
    UpstreamProtocolError,
    UpstreamStatusError,
    log,
    map_exceptions,
)
from adapters.providers.http1 import Http1Pool, Response
from adapters.providers.streams import ChunkStream, RawRelay
from adapters.session_pool import LazySession
from core import jsonfast
from core.errors import RemoteProtocolError
from core.records import frozen
from core.redaction import redact
from core.sse import (
    MAX_EVENT_BYTES,
    asking_usage,
    decode_json_object,
    model_ids,
    upstream_error_message,
)

_MAX_BODY_BYTES = 16 * 1024 * 1024  # a whole non-streamed answer
_MAX_ERROR_BYTES = 64 * 1024  # enough for any error message, not for an abuse
_KEY_MARK = "[provider key]"
SSE = "text/event-stream"


@frozen
class Upstream:
    """Where to send a call: an OpenAI-compatible base URL (ending in ``/v1`` as a
    rule), the provider key or None for keyless local servers, extra headers."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    extra_headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: How errors name this upstream; the base URL when empty.
    name: str = ""
    #: The key is the caller's own (stored in their profile), not the service's: a
    #: refusal of it is theirs to mend.
    callers_key: bool = False

    def url(self, path: str) -> str:
        return f"{self.base_url.rstrip('/')}/{path}"

    def redacted(self, text: AnyStr) -> AnyStr:
        """``text`` from the upstream without the key we sent it: some providers echo
        the key in a refusal ("Incorrect API key provided: sk-…"), whole, cut or
        masked, and their message is passed on to the caller, who must never see any
        of the key (``core.redaction``)."""
        if not self.api_key:
            return text
        if isinstance(text, bytes):
            clear = text.decode("utf-8", "surrogateescape")
            return redact(clear, [self.api_key], _KEY_MARK).encode("utf-8", "surrogateescape")
        return redact(text, [self.api_key], _KEY_MARK)

    def headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, **self.extra_headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    @property
    def label(self) -> str:
        return self.name or self.base_url


@frozen
class Timeouts:
    """``connect``: seconds to get a connection (pool wait included). ``read``: the
    longest silence allowed between two reads — a stream that keeps producing is
    never cut, however long it runs."""

    connect: float = 10.0
    read: float = 300.0


@contextmanager
def _redacting(upstream: Upstream) -> Iterator[None]:
    """An error frame read mid-stream (raised as the caller reads) without the key."""
    try:
        yield
    except UpstreamStatusError as error:
        _redact_refusal(error, upstream)
        raise


def _redact_refusal(error: UpstreamStatusError, upstream: Upstream) -> None:
    error.message = upstream.redacted(error.message)
    error.detail = upstream.redacted(error.detail)
    error.body = upstream.redacted(error.body)
    _log_refusal(error)


def _log_refusal(error: UpstreamStatusError) -> None:
    """The upstream's own words, which the caller may not be shown, kept in the log."""
    log.info("upstream refused", extra={"upstream": error.upstream, "detail": error.detail})


class ProviderClient(LazySession):
    """Calls upstreams over one connection pool (one per process and loop).

    ``list_models`` and ``complete`` return decoded JSON; ``stream`` and ``relay`` are
    async context managers yielding a ``ChunkStream`` or a ``RawRelay``. Leaving the
    context early — a break, an error, a cancelled task — closes the upstream
    connection at once. Failures raise ``UpstreamError`` subclasses. Call ``aclose()``
    (or use ``async with``) when the process stops.
    """

    def __init__(
        self,
        *,
        timeouts: Timeouts = Timeouts(),
        max_connections: int = 256,
        max_event_bytes: int = MAX_EVENT_BYTES,
    ) -> None:
        self.timeouts = timeouts
        self._max_connections = max_connections
        self._max_event_bytes = max_event_bytes
        #: base URLs of upstreams that answered a request with ``stream_options`` 400
        self._refuse_stream_options: set[str] = set()

    async def list_models(self, upstream: Upstream, *, timeouts: Timeouts | None = None) -> list[str]:
        """The model ids the upstream offers (``GET {base}/models``)."""
        async with self._request("GET", upstream, "models", None, timeouts) as response:
            payload = await self._json_body(response, upstream)
        with map_exceptions(upstream.label):
            return model_ids(payload)

    async def complete(
        self, upstream: Upstream, body: Mapping[str, Any], *, timeouts: Timeouts | None = None
    ) -> dict[str, Any]:
        """One non-streamed chat completion; ``body`` is forwarded as given, with
        ``stream`` forced off (and ``stream_options`` dropped, which needs it on)."""
        return (await self.complete_raw(upstream, body, timeouts=timeouts))[1]

    async def complete_raw(
        self, upstream: Upstream, body: Mapping[str, Any], *, timeouts: Timeouts | None = None
    ) -> tuple[bytes, dict[str, Any]]:
        """``complete``, with the upstream's body as it came (for passthrough, which
        answers it unchanged) beside what it decodes to."""
        request = {key: value for key, value in body.items() if key != "stream_options"}
        request["stream"] = False
        async with self._request("POST", upstream, "chat/completions", request, timeouts) as response:
            raw = await self._body(response, upstream, _MAX_BODY_BYTES)
        with map_exceptions(upstream.label):
            return raw, decode_json_object(raw)

    @asynccontextmanager
    async def stream(
        self, upstream: Upstream, body: Mapping[str, Any], *, timeouts: Timeouts | None = None
    ) -> AsyncIterator[ChunkStream]:
        """A streamed chat completion read as chunk dicts: ``async for chunk in s``."""
        async with self._event_stream(upstream, body, timeouts) as response:
            with _redacting(upstream):
                yield ChunkStream(response, upstream.label, self._max_event_bytes)

    def relay(
        self, upstream: Upstream, body: Mapping[str, Any], *, timeouts: Timeouts | None = None,
        count_usage: bool = False,
    ) -> _Relaying:
        """A streamed chat completion as the upstream's own bytes, for passthrough:
        ``async with client.relay(...) as r``, ``async for data in r: write(data)``,
        then read ``r.usage``.

        ``count_usage``: when ``body`` does not ask for the usage chunk, ask on the
        caller's behalf and leave the chunk out of what is relayed. An upstream that
        refuses ``stream_options`` is asked again without it, and never again with it
        by this process.
        """
        return _Relaying(self, upstream, body, timeouts, count_usage)

    # -- the request itself --------------------------------------------------------

    def _new_session(self) -> Http1Pool:
        return Http1Pool(self._max_connections)

    def _request(
        self,
        method: str,
        upstream: Upstream,
        path: str,
        body: Mapping[str, Any] | None,
        timeouts: Timeouts | None,
        accept: str = "application/json",
    ) -> _Exchange:
        """Send the request, check the status, and always let go of the response:
        ``async with self._request(...) as response``."""
        return _Exchange(self, method, upstream, path, body, timeouts, accept)

    def _event_stream(
        self, upstream: Upstream, body: Mapping[str, Any], timeouts: Timeouts | None
    ) -> _Exchange:
        return _Exchange(self, "POST", upstream, "chat/completions", {**body, "stream": True},
                         timeouts, SSE)

    async def _body(self, response: Response, upstream: Upstream, limit: int) -> bytes:
        """The whole body, or ``UpstreamProtocolError`` when it exceeds ``limit``."""
        parts, size = [], 0
        with map_exceptions(upstream.label, answering=True):
            while data := await response.readany():
                size += len(data)
                if size > limit:
                    raise RemoteProtocolError(f"body larger than {limit} bytes")
                parts.append(data)
        return b"".join(parts)

    async def _json_body(self, response: Response, upstream: Upstream) -> dict[str, Any]:
        body = await self._body(response, upstream, _MAX_BODY_BYTES)
        with map_exceptions(upstream.label):
            return decode_json_object(body)

    async def _status_error(
        self, response: Response, upstream: Upstream
    ) -> UpstreamStatusError:
        try:
            body = await self._body(response, upstream, _MAX_ERROR_BYTES)
        except UpstreamProtocolError:
            body = b""  # an oversized error body: the status alone must do
        message = upstream.redacted(upstream_error_message(body, response.status))
        error = UpstreamStatusError(response.status, message, upstream.redacted(body),
                                    upstream=upstream.label, callers_key=upstream.callers_key)
        _log_refusal(error)
        return error


class _Exchange:
    """One request to an upstream as ``async with``: sent on entry, its status checked
    (an event stream's content type too), and its response let go of on exit — back to
    the pool after a clean block, closed after a failed or cancelled one, so the
    upstream stops generating at once. A class rather than a generator-based context
    manager: every ``/v1`` passthrough request enters one."""

    __slots__ = ("_client", "_method", "_upstream", "_path", "_body", "_timeouts", "_accept",
                 "_response")

    def __init__(self, client: ProviderClient, method: str, upstream: Upstream, path: str,
                 body: Mapping[str, Any] | None, timeouts: Timeouts | None, accept: str) -> None:
        self._client, self._method, self._upstream, self._path = client, method, upstream, path
        self._body, self._timeouts, self._accept = body, timeouts, accept
        self._response: Response | None = None

    async def __aenter__(self) -> Response:
        client, upstream = self._client, self._upstream
        data = None if self._body is None else jsonfast.dumps(self._body)
        headers = upstream.headers(self._accept)
        if data is not None:
            headers["Content-Type"] = "application/json"
        timeouts = self._timeouts or client.timeouts
        with map_exceptions(upstream.label):
            # Never redirected: a redirected POST would silently become a GET.
            response = await client._get_session().request(
                self._method, upstream.url(self._path), headers, data,
                connect_timeout=timeouts.connect, read_timeout=timeouts.read)
        try:
            if response.status >= 300:
                raise await client._status_error(response, upstream)
            if self._accept == SSE and response.content_type != SSE:
                text = upstream.redacted(upstream_error_message(
                    await client._body(response, upstream, _MAX_ERROR_BYTES), 200))
                raise UpstreamProtocolError(
                    f"expected an event stream, got {response.content_type!r}: {text}",
                    upstream=upstream.label,
                )
        except BaseException:
            response.close()
            raise
        self._response = response
        return response

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> bool:
        response, self._response = self._response, None
        if response is not None:
            if kind is None:
                response.release()
            else:
                response.close()
        return False


class _Relaying:
    """``ProviderClient.relay`` as ``async with``: the exchange opened on entry (asking
    for the usage chunk when counting, again without it when the upstream refuses the
    option), the ``RawRelay`` handed out, an error frame raised while it is read
    redacted on exit, and the exchange let go of. A class, as ``_Exchange``."""

    __slots__ = ("_client", "_upstream", "_body", "_timeouts", "_count_usage", "_exchange")

    def __init__(self, client: ProviderClient, upstream: Upstream, body: Mapping[str, Any],
                 timeouts: Timeouts | None, count_usage: bool) -> None:
        self._client, self._upstream, self._body = client, upstream, body
        self._timeouts, self._count_usage = timeouts, count_usage
        self._exchange: _Exchange | None = None

    async def __aenter__(self) -> RawRelay:
        client, upstream, body, timeouts = self._client, self._upstream, self._body, self._timeouts
        asking = asking_usage(body) if self._count_usage else None
        refused = False
        response = None
        if asking is not None and upstream.base_url not in client._refuse_stream_options:
            exchange = client._event_stream(upstream, asking, timeouts)
            try:
                response = await exchange.__aenter__()
            except UpstreamStatusError as error:
                if error.status not in (400, 422) or "stream_options" not in error.message:
                    raise
                refused = True
        hide_usage = response is not None
        if response is None:
            exchange = client._event_stream(upstream, body, timeouts)
            response = await exchange.__aenter__()
            if refused and "stream_options" not in body:
                # Only our own option was refused (the caller sent none, and without
                # it the upstream answered): never add it there again.
                client._refuse_stream_options.add(upstream.base_url)
        self._exchange = exchange
        return RawRelay(response, upstream.label, client._max_event_bytes,
                        hide_usage=hide_usage, redact=upstream.redacted)

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> bool:
        exchange, self._exchange = self._exchange, None
        try:
            if isinstance(error, UpstreamStatusError):
                _redact_refusal(error, self._upstream)
        finally:
            if exchange is not None:
                await exchange.__aexit__(kind, error, traceback)
        return False
