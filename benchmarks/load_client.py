"""The benchmarks' load: chat completions over keep-alive connections, at little CPU cost.

A load generator shares the machine with the server it measures; aiohttp's client, on
asyncio's own loop, spent more CPU on each request than half of what svc spent to
serve it, so it measured the generator as much as the server. This one sends a request
laid out once (method, headers and JSON body as bytes) on a connection of its own per
worker, and reads the answer with httptools' parser on uvloop, as ``wrk`` does in C:
a few tens of microseconds a request.

``LoadConnection.exchange()`` answers (seconds to the end of the answer, seconds to its
first body bytes); a status other than 200 raises ``Refused`` with the body.
"""

from __future__ import annotations

__all__ = ["LoadConnection", "Refused", "request_bytes"]

import asyncio
import json
import time
from urllib.parse import urlsplit

import httptools


class Refused(Exception):
    """The target answered a status other than 200."""


def request_bytes(url: str, key: str, body: dict) -> bytes:
    """A POST of ``body`` as JSON to ``url`` with ``key`` as the bearer token."""
    parts = urlsplit(url)
    data = json.dumps(body).encode()
    return (f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


class _Answer(asyncio.Protocol):
    """The connection's protocol: one answer at a time, timed as it arrives."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.done: asyncio.Future[None] | None = None
        self.first: float | None = None
        self.body: list[bytes] = []
        self.closed = False
        self.status = 0
        #: whether the answer let the connection be kept (read as it ends: the parser
        #: forgets once it has moved on to the next message)
        self.keep_alive = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._end(error)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._end(exc or ConnectionResetError("the target closed the connection"))

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        if self.first is None:
            self.first = time.perf_counter()
        if self.status != 200:
            self.body.append(body)

    def on_message_complete(self) -> None:
        self.keep_alive = self.parser.should_keep_alive()
        self._end(None)

    def _end(self, error: BaseException | None) -> None:
        if self.done is not None and not self.done.done():
            if error is None:
                self.done.set_result(None)
            else:
                self.done.set_exception(error)


class LoadConnection:
    """One keep-alive connection to ``host:port`` sending ``request`` again and again;
    opened again when the target closes it."""

    def __init__(self, host: str, port: int, request: bytes) -> None:
        self.host, self.port, self.request = host, port, request
        self._answer: _Answer | None = None
        #: connections opened so far (one, unless the target closed some)
        self.opened = 0

    async def exchange(self) -> tuple[float, float | None]:
        answer = self._answer
        if answer is None or answer.closed:
            _, answer = await asyncio.get_running_loop().create_connection(
                _Answer, self.host, self.port)
            self._answer = answer
            self.opened += 1
        answer.done = asyncio.get_running_loop().create_future()
        answer.first, answer.body = None, []
        started = time.perf_counter()
        answer.transport.write(self.request)
        await answer.done
        ended = time.perf_counter()
        status = answer.status
        if not answer.keep_alive:
            answer.transport.close()
            self._answer = None
        if status != 200:
            raise Refused(f"HTTP {status}: {b''.join(answer.body).decode(errors='replace')}")
        return ended - started, None if answer.first is None else answer.first - started

    def close(self) -> None:
        if self._answer is not None and self._answer.transport is not None:
            self._answer.transport.close()
        self._answer = None
