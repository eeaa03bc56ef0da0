"""A response's status line and headers written together with its first body bytes.

uvicorn writes the head of a response as soon as the application starts it, and each
body part as it comes: a JSON answer costs two ``write`` system calls (and the client
two wake-ups), where one would do. ``HeadWithBodyProtocol`` hands each request cycle a
transport that holds the head back and writes it in one piece with the first body
bytes, or on its own when the response ends without any (a HEAD request, an empty
body) or the connection is closed. For a stream this is also what OpenAI does: the
status goes out with the first chunk. ``100 Continue`` is never held.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

_FINAL_STATUS = b"HTTP/1.1 "  # how uvicorn starts a head; "HTTP/1.1 1xx" is interim


class HeadHeldTransport:
    """The connection's transport as one request cycle writes to it. Once the head has
    gone out with body bytes, the cycle (when given) is handed the connection's own
    transport back: a stream's further chunks are written with no wrapper between."""

    __slots__ = ("_transport", "_head", "_cycle")

    def __init__(self, transport: asyncio.Transport, cycle: Any = None) -> None:
        self._transport = transport
        self._head: bytes | None = None  # the response head, until body bytes follow
        self._cycle = cycle

    def write(self, data: bytes) -> None:
        if self._head is not None:
            data, self._head = self._head + data, None
            if self._cycle is not None:
                self._cycle.transport, self._cycle = self._transport, None
        elif data[:9] == _FINAL_STATUS and data[9:10] != b"1":
            self._head = data
            return
        self._transport.write(data)

    def flush(self) -> None:
        """Write a head still held (the response ended without body bytes)."""
        if self._head is not None:
            head, self._head = self._head, None
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class HeadWithBodyProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with ``HeadHeldTransport`` in every request cycle
    it serves through ASGI (a pipelined request's as its turn comes)."""

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        held = HeadHeldTransport(self.transport, cycle)
        cycle.transport = held  # type: ignore[assignment]
        # Called back by the cycle itself as its response ends (``self.cycle`` may by
        # then be the next, pipelined request's).
        responded = cycle.on_response

        def on_response() -> None:
            held.flush()
            responded()

        cycle.on_response = on_response
        super()._start_asgi_task(cycle, app)
