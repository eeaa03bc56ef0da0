"""Deadlines for a request's headers and body, which uvicorn does not have.

uvicorn closes an idle kept-alive connection (``timeout_keep_alive``) and caps the
connections and tasks it serves at once (``limit_concurrency``), but a client that
sends its headers, or its body, a byte at a time holds a connection for as long as it
likes; enough of them and nobody else is served. This protocol gives the headers of
each request ``header_seconds`` from the connection (or from the request's first byte,
on a kept-alive connection), and the body ``body_seconds`` from the end of the headers.
Past a deadline the client gets 408 and the connection is closed; a handler still
waiting for the body sees the client as gone.

Only the request is timed: once its body is in, a long answer (a streamed completion)
is not, and a WebSocket (a call's media stream) leaves this protocol at the upgrade.
"""

from __future__ import annotations

import asyncio

from adapters.deadline import Deadline
from app.http.direct_answers import DirectAnswerProtocol
from app.http.disconnect import DisconnectTellingProtocol
from app.http.head_with_body import HeadWithBodyProtocol

_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                     b"content-length: 16\r\nconnection: close\r\n\r\nRequest Timeout.")


class DeadlineHttpProtocol(DisconnectTellingProtocol, DirectAnswerProtocol,
                           HeadWithBodyProtocol):
    header_seconds: float = 10.0
    body_seconds: float = 30.0

    # The headers, the body and the wait for the next request on a kept-alive
    # connection share the connection's one timer (``adapters.deadline``), uvicorn's
    # keep-alive timer of each response included.

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._idle = False  # between a response and the next request's first byte
        self._body_arriving = False  # a request's headers are in and its body is not
        self._deadline = Deadline(self.loop, self._deadline_passed)
        self._deadline.set(self.header_seconds)

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadline.stop()
        super().connection_lost(exc)

    def _deadline_passed(self) -> None:
        if self._idle:  # kept alive, and no request came: closed as uvicorn closes it
            self.timeout_keep_alive_handler()
        else:
            self._too_slow()

    def _too_slow(self) -> None:
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            # The handler waiting for the rest of the body hears that the client is gone.
            cycle.disconnected = True
            cycle.message_event.set()
            if cycle.response_started:  # a response under way cannot become a 408
                self.transport.close()
                return
        self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._idle or not self._deadline.is_set:  # the next request
            self._idle = False
            self._deadline.set(self.header_seconds)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if self.parser.should_upgrade() and self._should_upgrade():
            self._deadline.stop()  # a WebSocket: no longer ours to time
            return
        self._body_arriving = True
        if self.pipeline and self.pipeline[0][0] is self.cycle:
            # Queued behind an answer still being written, with reading paused: its
            # body is timed from its turn (``on_response_complete``), not from now.
            self._deadline.lift()
        else:
            self._deadline.set(self.body_seconds)

    def on_message_complete(self) -> None:
        self._body_arriving = False
        cycle = self.cycle
        if cycle is not None and cycle.response_complete and not self.pipeline:
            self._keep_alive_wait()  # answered before its body was in: idle now
        else:
            self._deadline.lift()
        super().on_message_complete()

    def on_response_complete(self) -> None:
        # uvicorn's, but for the keep-alive wait: on the deadline, not a timer of its own.
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            if self._body_arriving and cycle is self.cycle:  # its body is still due
                self._deadline.set(self.body_seconds)
            self._start_asgi_task(cycle, app)
        elif not self._deadline.is_set or self._body_arriving:
            # Else the next request has begun arriving. A body still arriving for an
            # answered request is not waited for: the connection is as good as idle.
            self._keep_alive_wait()

    def _keep_alive_wait(self) -> None:
        self._idle = True
        self._deadline.set(self.timeout_keep_alive)

    def handle_websocket_upgrade(self) -> None:
        self._deadline.stop()
        super().handle_websocket_upgrade()


def deadline_protocol(header_seconds: float, body_seconds: float) -> type[DeadlineHttpProtocol]:
    """The protocol class with these deadlines (uvicorn makes one per connection)."""
    return type("DeadlineHttpProtocol", (DeadlineHttpProtocol,),
                {"header_seconds": header_seconds, "body_seconds": body_seconds})
