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

from app.http.direct_answers import DirectAnswerProtocol
from app.http.disconnect import DisconnectTellingProtocol
from app.http.head_with_body import HeadWithBodyProtocol

_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                     b"content-length: 16\r\nconnection: close\r\n\r\nRequest Timeout.")


class DeadlineHttpProtocol(DisconnectTellingProtocol, DirectAnswerProtocol,
                           HeadWithBodyProtocol):
    header_seconds: float = 10.0
    body_seconds: float = 30.0

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._due: float | None = None  # when the part being read runs out of time

    # A timer per part would be two made and two cancelled for every request. Instead
    # the one timer is left to run while it fires no later than the current deadline
    # (each usually falls after the one before), and when it fires early it waits
    # again for what is due then: about once per header deadline on a busy connection.

    def _arm(self, seconds: float) -> None:
        due = self.loop.time() + seconds
        self._due = due
        if self._deadline is not None:
            if self._deadline.when() <= due:
                return  # fires first, and then waits again for this deadline
            self._deadline.cancel()
        self._deadline = self.loop.call_at(due, self._timer_fired)

    def _disarm(self) -> None:
        self._due = None  # the timer, when it fires, finds nothing due

    def _stop_timing(self) -> None:
        self._due = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timer_fired(self) -> None:
        self._deadline = None
        due = self._due
        if due is None:
            return
        if self.loop.time() < due:
            self._deadline = self.loop.call_at(due, self._timer_fired)
            return
        self._due = None
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

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.header_seconds)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timing()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._due is None:  # the next request on a kept-alive connection
            self._arm(self.header_seconds)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if self.parser.should_upgrade() and self._should_upgrade():
            self._stop_timing()  # a WebSocket: no longer ours to time
        else:
            self._arm(self.body_seconds)

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        self._stop_timing()
        super().handle_websocket_upgrade()


def deadline_protocol(header_seconds: float, body_seconds: float) -> type[DeadlineHttpProtocol]:
    """The protocol class with these deadlines (uvicorn makes one per connection)."""
    return type("DeadlineHttpProtocol", (DeadlineHttpProtocol,),
                {"header_seconds": header_seconds, "body_seconds": body_seconds})
