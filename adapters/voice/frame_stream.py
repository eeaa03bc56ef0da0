"""A byte stream for call audio connections: an asyncio protocol without per-frame overhead.

Each call's audio connection carries a 20 ms frame in each direction, so a process
with hundreds of calls reads and writes tens of thousands of small messages a second.
anyio's own socket stream is made for bulk transfers and costs, per message, more than
the frame's work itself: every ``send`` ends with a yield to the event loop (a task
switch per frame sent), and every ``receive`` that finds no data resumes the
transport's reading and pauses it again afterwards (two ``epoll_ctl`` system calls
per frame received).

``FrameStream`` is an ``anyio.abc.ByteStream`` over an ``asyncio.Protocol`` that
keeps reading on while fewer than ``READ_BUFFER_LIMIT`` bytes wait (and pauses the
peer beyond that, so memory stays bounded), hands over buffered data without a
detour through the loop, and writes at once: a send waits only while the kernel's
buffer is full, and ``write_now`` writes without waiting at all (the call's player
writes each frame from the shared ticker's timer callback). ``hand_over`` goes one step further for a reader that handles each
chunk at once: chunks go to it from the read callback, without waking a task.
``serve_frame_streams`` accepts connections on an already bound
listening socket with ``loop.create_server`` and runs a handler for each, in a task
group, until cancelled. asyncio only (the service runs on uvloop).
"""

from __future__ import annotations

__all__ = ["READ_BUFFER_LIMIT", "WRITE_BUFFER_LIMIT", "FrameStream", "serve_frame_streams"]

import asyncio
import socket
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import sniffio
from anyio.abc import ByteStream, SocketAttribute

#: Received bytes kept while nobody reads, before the peer is paused (TCP flow control).
READ_BUFFER_LIMIT = 64 * 1024
#: Bytes waiting in our own buffer, once the kernel's send buffer is full, before
#: writing pauses (a dozen 20 ms frames): past this the peer is not keeping up, and
#: ``write_now`` refuses rather than queue more behind what it has not read.
WRITE_BUFFER_LIMIT = 4 * 1024


class _FrameProtocol(asyncio.Protocol):
    def __init__(self, on_connected: Callable[[FrameStream], None]) -> None:
        self._on_connected = on_connected
        self.transport: asyncio.Transport | None = None
        self.received: deque[bytes] = deque()
        self.buffered = 0
        self.reading_paused = False
        self.at_eof = False
        self.lost = False
        self.exception: BaseException | None = None
        self.data_waiter: asyncio.Future[None] | None = None
        self.drain_waiter: asyncio.Future[None] | None = None
        self.writing_paused = False
        #: While set, each chunk read goes straight to it (``b""`` at the end).
        self.receiver: Callable[[bytes], None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a stream transport
        self.transport.set_write_buffer_limits(high=WRITE_BUFFER_LIMIT)
        self._on_connected(FrameStream(self))

    def data_received(self, data: bytes) -> None:
        if self.receiver is not None:
            self._give(data)
            return
        self.received.append(data)
        self.buffered += len(data)
        if self.buffered >= READ_BUFFER_LIMIT and not self.reading_paused:
            self.reading_paused = True
            assert self.transport is not None
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool:
        self.at_eof = True
        if self.receiver is not None:
            self._give(b"")
        self._wake_reader()
        return True  # keep our side open: a hangup frame may still go out

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.exception = exc
        if self.receiver is not None and not self.at_eof:
            self._give(b"")
        self._wake_reader()
        self._wake_writer()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._wake_writer()

    def _give(self, data: bytes) -> None:
        assert self.receiver is not None
        # Called back by the loop, outside any task: tell sniffio (and so anyio, should
        # the receiver start a task or make an event) which event loop this is.
        token = sniffio.current_async_library_cvar.set("asyncio")
        try:
            self.receiver(data)
        finally:
            sniffio.current_async_library_cvar.reset(token)

    def _wake_reader(self) -> None:
        waiter, self.data_waiter = self.data_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake_writer(self) -> None:
        waiter, self.drain_waiter = self.drain_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class FrameStream(ByteStream):
    """One accepted connection (see the module's docstring)."""

    def __init__(self, protocol: _FrameProtocol) -> None:
        assert protocol.transport is not None
        self._protocol = protocol
        self._transport = protocol.transport
        self._closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        protocol = self._protocol
        while not protocol.received:
            if self._closed:
                raise anyio.ClosedResourceError
            if protocol.exception is not None:
                raise anyio.BrokenResourceError from protocol.exception
            if protocol.at_eof or protocol.lost:
                raise anyio.EndOfStream
            waiter = protocol.data_waiter = asyncio.get_running_loop().create_future()
            await waiter
        chunk = protocol.received.popleft()
        if len(chunk) > max_bytes:
            chunk, rest = chunk[:max_bytes], chunk[max_bytes:]
            protocol.received.appendleft(rest)
        protocol.buffered -= len(chunk)
        if protocol.reading_paused and protocol.buffered < READ_BUFFER_LIMIT // 2:
            protocol.reading_paused = False
            self._transport.resume_reading()
        return chunk

    def hand_over(self, receiver: Callable[[bytes], None] | None) -> list[bytes]:
        """From now on give every chunk read to ``receiver`` in the loop's read callback,
        ``b""`` once the peer closed; None goes back to ``receive``. Returns what was
        read and not yet received, with ``b""`` after it when the peer had closed."""
        protocol = self._protocol
        waiting = list(protocol.received)
        protocol.received.clear()
        protocol.buffered = 0
        if protocol.reading_paused:
            protocol.reading_paused = False
            self._transport.resume_reading()
        if protocol.at_eof or protocol.lost:
            waiting.append(b"")
        protocol.receiver = receiver
        return waiting

    async def send(self, item: bytes) -> None:
        protocol = self._protocol
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if protocol.lost or self._transport.is_closing():
                raise anyio.BrokenResourceError from protocol.exception
            if not protocol.writing_paused:
                break
            waiter = protocol.drain_waiter = asyncio.get_running_loop().create_future()
            await waiter
        self._transport.write(item)

    def write_now(self, data: bytes) -> bool:
        """Write ``data`` at once, without waiting: False, with nothing written, while
        the peer is not keeping up (the kernel's send buffer is full and more than
        ``WRITE_BUFFER_LIMIT`` waits in our own). Raises as ``send`` does when the
        connection is closed or broken."""
        protocol = self._protocol
        if self._closed:
            raise anyio.ClosedResourceError
        if protocol.lost or self._transport.is_closing():
            raise anyio.BrokenResourceError from protocol.exception
        if protocol.writing_paused:
            return False
        self._transport.write(data)
        return True

    async def send_eof(self) -> None:
        self._transport.write_eof()

    async def aclose(self) -> None:
        self._closed = True
        if not self._transport.is_closing():
            try:
                self._transport.write_eof()
            except OSError:
                pass
            self._transport.close()
            await asyncio.sleep(0)
            self._transport.abort()
        self._protocol._wake_reader()
        self._protocol._wake_writer()

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]:
        raw: socket.socket = self._transport.get_extra_info("socket")
        return {
            SocketAttribute.family: lambda: raw.family,
            SocketAttribute.raw_socket: lambda: raw,
            SocketAttribute.local_address: lambda: raw.getsockname(),
            SocketAttribute.remote_address: lambda: raw.getpeername(),
        }


async def serve_frame_streams(sockets: list[socket.socket],
                              handle: Callable[[FrameStream], Awaitable[None]]) -> None:
    """Accept connections on the bound, listening ``sockets`` until cancelled; each runs
    ``handle(stream)`` in a task of its own. Cancelling stops accepting and cancels
    every handler."""
    loop = asyncio.get_running_loop()
    accepted = _Accepted()
    async with anyio.create_task_group() as tasks:
        servers = []
        try:
            for sock in sockets:
                servers.append(await loop.create_server(
                    lambda: _FrameProtocol(accepted.add), sock=sock))
            while True:
                # Handlers start here, in a task, not in the protocol's callback: anyio
                # needs to know which event loop runs when a task is started.
                while accepted.streams:
                    tasks.start_soon(handle, accepted.streams.popleft())
                accepted.waiter = loop.create_future()
                await accepted.waiter
        finally:
            for server in servers:
                server.close()


class _Accepted:
    """Connections accepted and not yet handed to a handler."""

    def __init__(self) -> None:
        self.streams: deque[FrameStream] = deque()
        self.waiter: asyncio.Future[None] | None = None

    def add(self, stream: FrameStream) -> None:
        self.streams.append(stream)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)
