"""A lean HTTP/1.1 client for calls to upstreams: kept-alive connections, httptools.

What belongs here: opening, pooling and closing connections to upstreams, writing a
request and reading its response — the status, the headers, and the body as it
arrives — with the parser uvicorn serves us with. What the bytes mean is for
``client.py`` and ``streams.py``.

Why not aiohttp's client, which the other adapters use: every ``/v1`` passthrough
request makes one upstream call, and aiohttp's took about 190 µs of CPU a call on
loopback where this takes about 70 µs (``benchmarks/upstream_clients.py``): a fifth
of such a request's whole cost. It does only what an upstream call needs. Redirects
are never followed (a redirected POST would become a GET); no cookies, no proxies; no
``Accept-Encoding`` is sent, so bodies come as they are (a compressed one is inflated
all the same). Each request is written in one piece and each connection carries one
request at a time.

Timeouts: ``connect`` bounds getting a connection, the wait for a free one in a full
pool included; ``read`` bounds each silence while a response is awaited or read, so a
stream that keeps producing is never cut.
"""

from __future__ import annotations

__all__ = ["ConnectFailed", "Connection", "Http1Pool", "InvalidRequest", "Response"]

import asyncio
import functools
import ssl
import time
import zlib
from collections import deque
from collections.abc import Mapping
from typing import NamedTuple
from urllib.parse import quote, urlsplit

import httptools

from adapters.deadline import Deadline
from core.errors import RemoteProtocolError

#: Idle connections older than this are closed rather than used (servers close theirs
#: after 5–75 s; aiohttp keeps its own 15 s).
KEEPALIVE_SECONDS = 15.0
#: Bytes a response may hold unread before its connection stops reading the socket.
_HIGH_WATER = 256 * 1024
_PORTS = {"http": 80, "https": 443}
#: What stays as it is in a request target: the reserved characters, and ``%`` so that
#: what is already percent-encoded is not encoded again (as yarl does).
_SAFE = "/%:@!$&'()*+,;=~"
#: Headers that frame the message: the client writes them, a caller may not.
_FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})
#: A compressed body inflated past this is refused (no answer is near it).
_MAX_INFLATED = 64 * 1024 * 1024


class ConnectFailed(ConnectionError):
    """No connection could be made: the name did not resolve, the port refused, or
    the TLS handshake failed."""


class InvalidRequest(ValueError):
    """The request cannot be written: not an http(s) URL, or a header with a line end."""


class Origin(NamedTuple):
    """Where connections go; one pool of idle connections per origin."""

    scheme: str
    host: str
    port: int

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _PORTS[self.scheme] else f"{host}:{self.port}"


@functools.lru_cache(maxsize=256)
def _split(url: str) -> tuple[Origin, str]:
    """``url``'s origin and request target (path and query, percent-encoded where a
    character may not stand in a request line), parsed once per URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a port that is not a number, an unclosed bracket
        raise InvalidRequest(f"not a usable URL: {url!r} ({exc})") from None
    if parts.scheme not in _PORTS or not parts.hostname or parts.username is not None:
        raise InvalidRequest(f"not an http or https URL without credentials: {url!r}")
    origin = Origin(parts.scheme, parts.hostname, port or _PORTS[parts.scheme])
    target = quote(parts.path or "/", safe=_SAFE) + (
        f"?{quote(parts.query, safe=_SAFE + '?')}" if parts.query else "")
    return origin, target


def _head(method: str, url: str, headers: Mapping[str, str], length: int | None) -> bytes:
    """The request line and headers, ``Content-Length`` last when there is a body.
    What comes before it is made once per method, URL and headers: an upstream's
    calls differ only in their body."""
    key = (method, url, *headers.items())
    fixed = _fixed_heads.get(key)
    if fixed is None:
        origin, target = _split(url)
        fixed = _fixed_head(method, target, origin, headers)
        if len(_fixed_heads) >= _FIXED_HEADS_KEPT:
            _fixed_heads.clear()  # keys rotated, or headers that change per call
        _fixed_heads[key] = fixed
    return fixed + (b"\r\n" if length is None else b"Content-Length: %d\r\n\r\n" % length)


_fixed_heads: dict[tuple[str, ...], bytes] = {}
_FIXED_HEADS_KEPT = 256


def _fixed_head(method: str, target: str, origin: Origin, headers: Mapping[str, str]) -> bytes:
    """The request line and the headers but the length. A caller's ``Host`` or
    ``User-Agent`` replaces ours; the headers that frame the message are ours alone."""
    lines = [f"{method} {target} HTTP/1.1"]
    own = {"host": f"Host: {origin.host_header}", "user-agent": "User-Agent: svc"}
    for name, value in headers.items():
        if "\r" in name or "\n" in name or ":" in name or "\r" in value or "\n" in value:
            raise InvalidRequest(f"a header cannot hold a line end or its name a colon: {name!r}")
        key = name.lower()
        if key in _FRAMING_HEADERS:
            raise InvalidRequest(f"the client writes {name!r} itself")
        own.pop(key, None)
        lines.append(f"{name}: {value}")
    lines.extend(own.values())
    return ("\r\n".join(lines) + "\r\n").encode()


class Response:
    """One response as it arrives: ``status`` and ``headers`` (names in lower case)
    once the request returns it, the body through ``readany``. ``release`` when done
    with it: its connection goes back to the pool when the body was read whole, and is
    closed otherwise; ``close`` always closes it."""

    __slots__ = ("status", "headers", "_connection", "_chunks", "_buffered", "_done",
                 "_error", "_waiter", "_read_timeout", "_inflate", "_inflated")

    def __init__(self, connection: Connection, read_timeout: float) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self._connection: Connection | None = connection
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._done = False  # the whole body has arrived
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._read_timeout = read_timeout
        self._inflate = None
        self._inflated = 0

    @property
    def content_type(self) -> str:
        """The media type, without parameters, in lower case (as aiohttp names it)."""
        value = self.headers.get("content-type", "application/octet-stream")
        return value.partition(";")[0].strip().lower()

    async def readany(self) -> bytes:
        """What has arrived of the body since the last read, waiting for some if
        nothing has; ``b""`` once the body is over. Raises what ended it otherwise."""
        while not self._chunks:
            if self._error is not None:
                raise self._error
            if self._done:
                return b""
            await self._wait()
        chunks = self._chunks
        data = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        if self._buffered > _HIGH_WATER and self._connection is not None:
            self._connection.resume()
        self._buffered = 0
        return data

    async def _wait(self) -> None:
        connection = self._connection
        assert connection is not None, "a response let go of has failed (``_detach``)"
        self._waiter = waiter = connection.loop.create_future()
        try:
            await connection.within_read_timeout(waiter, self._read_timeout)
        finally:
            self._waiter = None

    def release(self) -> None:
        reusable = self._done and self._error is None
        connection = self._detach()
        if connection is not None:
            connection.finished(reusable=reusable)

    def close(self) -> None:
        connection = self._detach()
        if connection is not None:
            connection.finished(reusable=False)

    def _detach(self) -> Connection | None:
        """Let go of the connection. A body not yet whole fails: nothing that comes
        later will reach it, whether a read waits for it now (in another task) or
        comes after."""
        connection, self._connection = self._connection, None
        if not self._done:
            self._fail(ConnectionResetError("the response was closed before its body was read"))
        return connection

    # -- what the connection tells

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _feed(self, data: bytes) -> None:
        """Body bytes: kept until read (the reader is woken once per socket read)."""
        if self._inflate is not None:
            data = self._inflate.decompress(data, _MAX_INFLATED - self._inflated + 1)
            self._inflated += len(data)
            if self._inflated > _MAX_INFLATED:
                raise RemoteProtocolError(f"a compressed body inflates past {_MAX_INFLATED} "
                                          "bytes", hint=502)
            if not data:
                return  # b"" would read as the body's end
        self._chunks.append(data)
        self._buffered += len(data)

    def _arrived(self) -> None:
        """A socket read has been parsed: wake the reader; stop reading the socket
        while too much waits unread."""
        if self._buffered > _HIGH_WATER and self._connection is not None:
            self._connection.pause()
        self._wake()

    def _end(self) -> None:
        if self._inflate is not None:
            rest = self._inflate.flush()
            if rest:
                self._chunks.append(rest)
        self._done = True
        self._wake()

    def _fail(self, error: BaseException) -> None:
        if not self._done and self._error is None:
            self._error = error
        self._wake()

    def _headers_complete(self, status: int) -> None:
        self.status = status
        encoding = self.headers.get("content-encoding", "").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            # Not asked for, but a server may send it all the same: inflate it.
            self._inflate = zlib.decompressobj(wbits=47 if encoding != "deflate" else 15)


class Connection(asyncio.Protocol):
    """One connection to an origin, carrying one request at a time."""

    def __init__(self, pool: Http1Pool, origin: Origin) -> None:
        self._pool, self.origin = pool, origin
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._response: Response | None = None
        self._headers_waiter: asyncio.Future[None] | None = None
        self._keep_alive = False
        self._until_close = False  # the body ends when the server closes
        self._stray = False  # bytes came that answer no request: close once read
        self._interim = False  # an interim answer (1xx) has come: the real one follows
        self.idle_since = 0.0  #: on ``time.monotonic``
        self.closed = False
        # Kept: asking for the running loop is a system call (``getpid``) on 3.11.
        self.loop = asyncio.get_running_loop()
        #: bounds each wait for the upstream (``within_read_timeout``)
        self._silence = Deadline(self.loop, self._silent_too_long)

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self._pool._made(self)

    def data_received(self, data: bytes) -> None:
        if self._response is None:
            self.close()  # bytes nobody asked for: the connection is unusable
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._broken(RemoteProtocolError(f"malformed HTTP response: {exc}", hint=502))
        except httptools.HttpParserUpgrade:
            self._broken(RemoteProtocolError("the upstream switched protocols", hint=502))
        else:
            response = self._response
            if response is not None and response._chunks:
                response._arrived()
            if self._stray:
                self.close()

    def eof_received(self) -> None:
        # The upstream closed its side: never reuse the connection, even before
        # ``connection_lost`` (which comes a loop turn later) has been called.
        self.closed = True

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._silence.stop()
        response = self._response
        if response is not None and not response._done:
            if self._until_close and response.status and exc is None:  # a clean close
                response._end()  # without a length, a body ends with its connection
            else:
                response._fail(ConnectionResetError(
                    "the upstream closed the connection before the response was complete"))
        self._settle_headers(ConnectionResetError(
            "the upstream closed the connection before it answered"))
        self._pool._lost(self)

    # -- httptools callbacks

    def on_message_begin(self) -> None:
        if self._interim:
            self._interim = False  # the answer after an interim one (100, 103)
        elif self._response is None or self._response._done:
            self._stray = True  # a second answer to one request: ignored, then closed

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._stray:
            return
        headers = self._response.headers
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text

    def on_headers_complete(self) -> None:
        response = self._response
        if response is None or self._stray:
            return
        status = self._parser.get_status_code()
        if 100 <= status < 200 and status != 101:
            # Interim (100 Continue, 103 Early Hints): the answer comes after it.
            self._interim = True
            response.headers.clear()
            return
        self._keep_alive = self._parser.should_keep_alive()
        headers = response.headers
        self._until_close = ("content-length" not in headers
                             and "chunked" not in headers.get("transfer-encoding", "").lower())
        response._headers_complete(status)
        self._settle_headers(None)

    def on_body(self, body: bytes) -> None:
        if self._response is not None and not self._stray:
            self._response._feed(body)

    def on_message_complete(self) -> None:
        if self._response is not None and not self._stray and not self._interim:
            self._response._end()

    # -- what the pool and the response ask

    async def send(self, head_and_body: bytes, response: Response) -> None:
        """Write a request and wait for its response's head."""
        self._response = response
        self._headers_waiter = waiter = self.loop.create_future()
        self._pool._write_soon(self, head_and_body)
        try:
            await self.within_read_timeout(waiter, response._read_timeout)
        finally:
            self._headers_waiter = None

    async def within_read_timeout(self, waiter: asyncio.Future[None], seconds: float) -> None:
        """Await ``waiter`` (the response's head, or more of its body); past ``seconds``
        of silence it raises ``TimeoutError``."""
        self._silence.set(seconds)
        try:
            await waiter
        finally:
            self._silence.lift()

    def _silent_too_long(self) -> None:
        error = TimeoutError("no answer from the upstream in time")
        self._settle_headers(error)
        response = self._response
        waiter = response._waiter if response is not None else None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)

    def finished(self, *, reusable: bool) -> None:
        self._response = None
        if reusable and self._keep_alive and not self.closed:
            self.resume()  # a body left unread may have paused it
            self._pool._keep(self)
        else:
            self.close()

    def write(self, data: bytes) -> None:
        self._transport.write(data)  # type: ignore[union-attr]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._transport is not None:
                self._transport.close()

    def closing(self) -> bool:
        return self._transport is None or self._transport.is_closing()

    def pause(self) -> None:
        if self._transport is not None and not self.closed:
            self._transport.pause_reading()

    def resume(self) -> None:
        if self._transport is not None and not self.closed:
            self._transport.resume_reading()

    def _settle_headers(self, error: BaseException | None) -> None:
        waiter = self._headers_waiter
        if waiter is not None and not waiter.done():
            if error is None:
                waiter.set_result(None)
            else:
                waiter.set_exception(error)

    def _broken(self, error: BaseException) -> None:
        if self._response is not None:
            self._response._fail(error)
        self._settle_headers(error)
        self.close()


class Http1Pool:
    """Connections to any number of origins, ``max_connections`` open at most."""

    def __init__(self, max_connections: int = 256, *,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self._max = max_connections
        self._ssl_context = ssl_context
        self._idle_by_origin: dict[Origin, list[Connection]] = {}
        self._open = 0  # connections made or being made, idle or not
        self._slot_waiters: deque[asyncio.Future[None]] = deque()
        self._all: set[Connection] = set()
        self._closed = False
        #: requests to write once the loop's callbacks ready now have run
        self._to_write: list[tuple[Connection, bytes]] = []

    async def request(self, method: str, url: str, headers: Mapping[str, str],
                      body: bytes | None, *, connect_timeout: float,
                      read_timeout: float) -> Response:
        """Send a request and return its response once its head has arrived. A
        failure, or the caller's cancellation, closes the connection."""
        if self._closed:
            raise RuntimeError("the connection pool is closed")
        head = _head(method, url, headers, None if body is None else len(body))
        origin = _split(url)[0]
        connection = self._idle_connection(origin)
        if connection is None:
            async with asyncio.timeout(connect_timeout):
                connection = await self._connect(origin)
        response = Response(connection, read_timeout)
        try:
            await connection.send(head if body is None else head + body, response)
        except BaseException:
            response.close()
            raise
        return response

    async def close(self) -> None:
        self._closed = True
        while self._slot_waiters:
            waiter = self._slot_waiters.popleft()
            if not waiter.done():
                waiter.set_exception(RuntimeError("the connection pool is closed"))
        for connection in list(self._all):
            connection.close()
        self._idle_by_origin.clear()

    # -- the pool's own bookkeeping

    def _idle_connection(self, origin: Origin) -> Connection | None:
        idle = self._idle_by_origin.get(origin)
        if not idle:
            return None
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if (not connection.closed and not connection.closing()
                    and now - connection.idle_since < KEEPALIVE_SECONDS):
                return connection
            connection.close()
        return None

    async def _connect(self, origin: Origin) -> Connection:
        loop = asyncio.get_running_loop()
        while self._open >= self._max:
            idle = self._oldest_idle()
            if idle is not None:
                # Its slot goes to this origin once the loss is noted (``_lost``).
                self._idle_by_origin[idle.origin].remove(idle)
                idle.close()
            waiter = loop.create_future()
            self._slot_waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter in self._slot_waiters:
                    self._slot_waiters.remove(waiter)
                elif waiter.done() and not waiter.cancelled():
                    self._free_slot()  # woken as the wait ended: the slot is another's
                raise
            reused = self._idle_connection(origin)
            if reused is not None:
                return reused
        self._open += 1
        connection = Connection(self, origin)
        tls = origin.scheme == "https"
        try:
            await loop.create_connection(
                lambda: connection, origin.host, origin.port,
                ssl=(self._ssl_context or _default_ssl()) if tls else None,
                server_hostname=origin.host if tls else None)
        except BaseException as exc:
            if connection in self._all:
                connection.close()  # made, then given up: its loss frees the slot
            else:  # never made: no connection_lost will come
                self._open -= 1
                self._free_slot()
            if isinstance(exc, OSError) and not isinstance(exc, TimeoutError):
                raise ConnectFailed(f"cannot connect to {origin.host_header}: {exc}") from exc
            raise
        if self._closed:
            connection.close()
            raise RuntimeError("the connection pool is closed")
        return connection

    def _oldest_idle(self) -> Connection | None:
        oldest = None
        for idle in self._idle_by_origin.values():
            if idle and (oldest is None or idle[0].idle_since < oldest.idle_since):
                oldest = idle[0]
        return oldest

    def _write_soon(self, connection: Connection, data: bytes) -> None:
        """Write ``data`` a loop turn later, with every other request made meanwhile.

        As aiohttp's client does (it writes a request from a task of its own): the
        requests made from one turn's events reach an upstream in one burst, which it
        reads in one wake-up. Written as each was made, they trickle out a request's
        work apart, and a fast upstream on this machine sleeps and is woken again for
        every one: twice the upstream's CPU a request, and a costlier write for us."""
        if not self._to_write:
            connection.loop.call_soon(self._write_waiting)
        self._to_write.append((connection, data))

    def _write_waiting(self) -> None:
        waiting, self._to_write = self._to_write, []
        for connection, data in waiting:
            if not connection.closing():  # else given up meanwhile (cancelled, lost)
                try:
                    connection.write(data)
                except Exception as exc:  # that request fails; the others still go
                    connection._broken(exc)

    def _made(self, connection: Connection) -> None:
        self._all.add(connection)

    def _keep(self, connection: Connection) -> None:
        if self._closed:
            connection.close()
            return
        connection.idle_since = time.monotonic()
        self._idle_by_origin.setdefault(connection.origin, []).append(connection)
        self._free_slot()

    def _lost(self, connection: Connection) -> None:
        idle = self._idle_by_origin.get(connection.origin)
        if idle and connection in idle:
            idle.remove(connection)
        if connection in self._all:
            self._all.discard(connection)
            self._open -= 1
        self._free_slot()

    def _free_slot(self) -> None:
        while self._slot_waiters:
            waiter = self._slot_waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


@functools.cache
def _default_ssl() -> ssl.SSLContext:
    return ssl.create_default_context()
