"""The carrier transport: Twilio Media Streams over a WebSocket, for one call.

``serve_carrier_stream`` takes a freshly accepted WebSocket (wrapped by the app in the
small ``TextSocket`` protocol, so this module never sees the web framework): it waits
up to 5 seconds for the ``start`` event, redeems the ``ticket`` in its
``customParameters``, and hands a ``CarrierTransport`` to ``answer``. No ticket in
time, a ticket that does not redeem, or anything that breaks the protocol before that,
closes the socket without a word (spec: telephony.md "Authentication", DESIGN.md
"Carrier").

``CarrierTransport`` is the session's ``CallTransport``: caller μ-law is decoded to
16-bit PCM; our 20 ms frames are encoded to μ-law, one ``media`` message each; the
end of each utterance is marked, and the utterance counts as finished when the mark
comes back (the carrier's own queue has played out); a barge-in sends ``clear``, after
which returned marks count as cleared, not heard (``core.carrier_media``). Hanging up closes the
socket, and the carrier then asks the ``<Connect>`` action what to do next. Keys
(``dtmf``) are handed on as they come; an event this service does not know and a mark
it never sent are logged and change nothing.

The carrier buffers what it is sent and plays it at the call's rate (``clear`` empties
that buffer), so the player keeps a lead of ``PLAYOUT_LEAD_FRAMES`` ahead of the
caller's ear: a busy moment of the process then costs none of what the caller hears.
"""

from __future__ import annotations

__all__ = ["IDENTIFY_SECONDS", "CarrierTransport", "TextSocket", "serve_carrier_stream"]

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import anyio

from adapters.voice.transport import CallTransport, TransportBroken
from core.carrier_media import (
    CarrierConnection,
    DtmfReceived,
    Event,
    MarkReceived,
    MediaReceived,
    MessageIgnored,
    StreamStarted,
    StreamState,
    StreamStopped,
)
from core.errors import RemoteProtocolError
from kernels.ulaw import lin2ulaw, ulaw2lin

log = logging.getLogger("svc.voice.carrier")

# spec: telephony.md "Limits" — "Identifier not presented on connecting: 5 seconds".
IDENTIFY_SECONDS = 5.0
#: Close code when the peer did not prove who it is: a policy violation, and no reason.
CLOSE_UNIDENTIFIED = 1008
TICKET_PARAMETER = "ticket"
#: How long the end of an utterance waits for its mark to come back (the audio the
#: carrier still had queued has then played); a carrier that does not return marks
#: costs this much at the end of each utterance, no more.
MARK_WAIT_SECONDS = 2.0
#: Frames sent ahead of the caller's ear (200 ms): the carrier's buffer absorbs a
#: moment the process is busy, and a barge-in's ``clear`` drops them all at once.
PLAYOUT_LEAD_FRAMES = 10

CallT = TypeVar("CallT")


class TextSocket(Protocol):
    """An accepted WebSocket as the transport needs it."""

    async def receive(self) -> str | bytes | None:
        """The next message (text or binary), or None once the peer closed."""
        ...

    async def send_text(self, text: str) -> None: ...

    async def close(self, code: int = 1000) -> None: ...


class CarrierTransport(CallTransport):
    """One started media stream, as a ``CallTransport``. It has neither fast path: a
    WebSocket message is read and sent by awaiting (``relay`` reads ``receive``, and
    the player's task sends each frame)."""

    #: The player may send this many frames ahead of the call's time (see above).
    lead_frames = PLAYOUT_LEAD_FRAMES

    def __init__(self, socket: TextSocket, connection: CarrierConnection,
                 pending: list[Event] | None = None) -> None:
        self.socket = socket
        self.connection = connection
        self._pending: deque[Event] = deque(pending or ())
        self._marks_sent = 0
        self._awaited_marks: dict[str, anyio.Event] = {}
        self.mark_wait_seconds = MARK_WAIT_SECONDS
        #: Returned marks whose audio the caller heard, and those a clear discarded.
        self.marks_heard = 0
        self.marks_cleared = 0

    async def receive(self) -> bytes | str | None:
        while True:
            while self._pending:
                event = self._pending.popleft()
                if isinstance(event, MediaReceived):
                    return ulaw2lin(event.ulaw)
                if isinstance(event, DtmfReceived):
                    return event.digit
                if isinstance(event, StreamStopped):
                    return None
                if isinstance(event, MessageIgnored):
                    log.info("media stream message ignored: %s", event.reason)
                if isinstance(event, MarkReceived):
                    if event.heard:
                        self.marks_heard += 1
                    else:
                        self.marks_cleared += 1
                    returned = self._awaited_marks.pop(event.name, None)
                    if returned is not None:
                        returned.set()
            await self._read()

    async def _read(self) -> None:
        message = await _receive(self.socket)
        if message is None:
            raise TransportBroken("the carrier closed the media stream without stop")
        try:
            if isinstance(message, str):
                self.connection.receive_text(message)
            else:
                self.connection.receive_binary(message)
        except RemoteProtocolError as exc:
            await _close(self.socket, int(exc.hint or 1002))
            raise TransportBroken(f"the carrier broke the protocol: {exc}") from None
        self._pending.extend(self.connection.events_received())

    async def _flush(self) -> None:
        for message in self.connection.data_to_send():
            try:
                await self.socket.send_text(message)
            except Exception as exc:  # the framework's disconnect errors, OSError
                raise TransportBroken(f"the media stream cannot be written: {exc}") from None

    @property
    def _streaming(self) -> bool:
        return self.connection.state is StreamState.STREAMING

    async def send_frame(self, pcm: bytes) -> None:
        if self._streaming:
            self.connection.send_media(lin2ulaw(pcm))
            await self._flush()

    async def end_of_speech(self, utterance: int) -> None:
        """Mark the end of the utterance and wait until the carrier returns the mark:
        then the caller has heard it all (or a clear discarded the rest)."""
        if not self._streaming:
            return
        self._marks_sent += 1
        name = f"u{utterance}.{self._marks_sent}"
        returned = self._awaited_marks[name] = anyio.Event()
        self.connection.send_mark(name)
        await self._flush()
        with anyio.move_on_after(self.mark_wait_seconds):
            await returned.wait()
        self._awaited_marks.pop(name, None)

    async def stop_playback(self) -> None:
        if self._streaming:
            self.connection.clear()
            await self._flush()

    async def hang_up(self) -> None:
        await _close(self.socket, 1000)


async def _receive(socket: TextSocket) -> str | bytes | None:
    try:
        return await socket.receive()
    except Exception as exc:  # a reset connection: the framework's error, OSError
        raise TransportBroken(f"the media stream failed: {exc}") from None


async def _close(socket: TextSocket, code: int) -> None:
    try:
        await socket.close(code)
    except Exception:
        log.debug("closing the media stream failed", exc_info=True)


async def _await_start(socket: TextSocket, connection: CarrierConnection
                       ) -> tuple[StreamStarted, list[Event]] | None:
    """Read until ``start``; None when the peer closed or broke the protocol first."""
    while True:
        message = await socket.receive()
        if message is None:
            return None
        try:
            if isinstance(message, str):
                connection.receive_text(message)
            else:
                connection.receive_binary(message)
        except RemoteProtocolError:
            return None
        events = connection.events_received()
        for index, event in enumerate(events):
            if isinstance(event, StreamStarted):
                return event, events[index + 1:]


async def serve_carrier_stream(socket: TextSocket,
                               redeem: Callable[[str], Awaitable[CallT | None]],
                               answer: Callable[[CallTransport, CallT], Awaitable[None]]) -> None:
    """Admit one media stream by its ticket and run its call; close it silently
    otherwise. The socket is closed when this returns."""
    connection = CarrierConnection()
    started = None
    try:
        with anyio.move_on_after(IDENTIFY_SECONDS):
            started = await _await_start(socket, connection)
    except Exception:
        log.debug("media stream failed before start", exc_info=True)
    call = None
    try:
        if started is not None:
            ticket = started[0].custom_parameters.get(TICKET_PARAMETER, "")
            call = await redeem(ticket) if ticket else None
    except Exception:
        log.exception("the media stream's ticket could not be redeemed")
    if call is None:
        await _close(socket, CLOSE_UNIDENTIFIED)  # without a word
        return
    transport = CarrierTransport(socket, connection, started[1])
    try:
        await answer(transport, call)
    except Exception:
        log.exception("a carrier call failed")  # the carrier is told nothing more
    finally:
        await _close(socket, 1000)
