"""The carrier media stream: which message may come when, what we may send, and marks.

All transition logic of the carrier's media WebSocket lives in the two tables below;
the methods only look them up. Feed whole text messages with ``receive_text``, take
events with ``events_received``, hand outbound events to ``send`` (or use the
shorthands ``send_media``, ``send_mark``, ``clear``) and write each string that
``data_to_send`` returns as one text message.
"""

from __future__ import annotations

__all__ = ["CarrierConnection", "StreamState"]

import enum

from ..errors import LocalProtocolError, RemoteProtocolError
from ._codec import (
    MarkEcho,
    UnknownEvent,
    decode_message,
    encode_clear,
    encode_mark,
    encode_media,
    remote_error,
)
from ._events import (
    ClearAudio,
    DtmfReceived,
    Event,
    MarkReceived,
    MediaReceived,
    MessageIgnored,
    SendMark,
    SendMedia,
    StreamConnected,
    StreamStarted,
    StreamStopped,
)
from ._side import StreamSide


class StreamState(enum.Enum):
    """Where a carrier media stream stands."""

    #: The socket is open and nothing has arrived yet.
    OPENED = "opened"
    #: ``connected`` arrived; ``start`` must come next.
    CONNECTED = "connected"
    #: ``start`` arrived: audio flows both ways.
    STREAMING = "streaming"
    #: The carrier sent ``stop``: nothing more arrives and nothing more may be sent.
    STOPPED = "stopped"
    #: The carrier broke the protocol: close the socket with the error's close code.
    FAILED = "failed"


_S = StreamState

# (state, inbound event type) -> next state. A missing pair is the carrier's protocol
# error: media before start, a second start, anything after stop. ``connected`` is
# optional (some Twilio-compatible carriers omit it) but comes only first.
_INBOUND: dict[tuple[StreamState, type], StreamState] = {
    (_S.OPENED, StreamConnected): _S.CONNECTED,
    (_S.OPENED, StreamStarted): _S.STREAMING,
    (_S.CONNECTED, StreamStarted): _S.STREAMING,
    (_S.STREAMING, MediaReceived): _S.STREAMING,
    (_S.STREAMING, DtmfReceived): _S.STREAMING,
    (_S.STREAMING, MarkEcho): _S.STREAMING,
    (_S.STREAMING, StreamStopped): _S.STOPPED,
}

# (state, outbound event type) -> next state. A missing pair is our own misuse: there
# is no stream to address before start, and none left after stop.
_OUTBOUND: dict[tuple[StreamState, type], StreamState] = {
    (_S.STREAMING, SendMedia): _S.STREAMING,
    (_S.STREAMING, SendMark): _S.STREAMING,
    (_S.STREAMING, ClearAudio): _S.STREAMING,
}

#: Where the carrier may return marks, read off the inbound table when the module
#: loads: only there is a mark we never sent ignored rather than out of order.
_MARKS_RETURN_IN = frozenset(state for state, kind in _INBOUND if kind is MarkEcho)


class CarrierConnection(StreamSide):
    """Sans-IO server side of one carrier media WebSocket.

    The carrier sends ``StreamConnected`` then ``StreamStarted`` (redeem the ticket in
    its ``custom_parameters``; close without a word when rejected), then caller audio,
    keys and returned marks, and ends with ``StreamStopped``. An event this service
    does not know, and a mark it never sent, become ``MessageIgnored`` and change
    nothing: neither is a reason to end a call.
    """

    _FAILED = StreamState.FAILED

    def __init__(self) -> None:
        self._state = StreamState.OPENED
        self._stream_sid: str | None = None
        self._events: list[Event] = []
        self._outgoing: list[str] = []
        # Marks sent and not yet returned, in sending order (a dict keeps the order).
        self._pending_marks: dict[str, None] = {}
        # Marks whose audio a clear discarded; the carrier still returns them.
        self._cleared_marks: dict[str, None] = {}
        self._error: RemoteProtocolError | None = None

    @property
    def state(self) -> StreamState:
        return self._state

    @property
    def stream_sid(self) -> str | None:
        """The carrier's name for the stream, known once ``start`` arrived."""
        return self._stream_sid

    @property
    def pending_marks(self) -> tuple[str, ...]:
        """Marks whose audio is still queued at the carrier, oldest first."""
        return tuple(self._pending_marks)

    def _take_text(self, text: str) -> None:
        inbound = decode_message(text)
        self._accept(inbound.stream_sid, inbound.event)

    def events_received(self) -> list[Event]:
        """Return and forget the events received so far, oldest first."""
        events, self._events = self._events, []
        return events

    def send(self, event: SendMedia | SendMark | ClearAudio) -> None:
        """Queue one outbound message; raises ``LocalProtocolError`` outside a stream,
        for empty audio, an empty or still-pending mark name, or an oversized message."""
        target = _OUTBOUND.get((self._state, type(event)))
        if target is None:
            raise LocalProtocolError(
                f"cannot send {type(event).__name__} in state {self._state.name}"
            )
        stream_sid = self._stream_sid
        assert stream_sid is not None  # STREAMING implies start was received
        if isinstance(event, SendMedia):
            self._outgoing.append(_media_message(stream_sid, event.ulaw))
        elif isinstance(event, SendMark):
            self._outgoing.append(self._mark_message(stream_sid, event.name))
        else:
            # spec: the carrier returns the marks of discarded audio; they count as
            # cleared, not heard.
            self._outgoing.append(encode_clear(stream_sid))
            self._cleared_marks.update(self._pending_marks)
            self._pending_marks.clear()
        self._state = target

    def send_media(self, ulaw: bytes) -> None:
        """Shorthand for ``send(SendMedia(ulaw))``."""
        self.send(SendMedia(ulaw))

    def send_mark(self, name: str) -> None:
        """Shorthand for ``send(SendMark(name))``."""
        self.send(SendMark(name))

    def clear(self) -> None:
        """Shorthand for ``send(ClearAudio())``."""
        self.send(ClearAudio())

    def data_to_send(self) -> list[str]:
        """Return and forget the text messages to write, in order."""
        messages, self._outgoing = self._outgoing, []
        return messages

    def _accept(self, stream_sid: str | None, event: Event | MarkEcho | UnknownEvent) -> None:
        if isinstance(event, UnknownEvent):
            self._events.append(MessageIgnored(f"unknown event {event.name!r}"))
            return
        if isinstance(event, MarkEcho) and self._state in _MARKS_RETURN_IN and not (
                event.name in self._pending_marks or event.name in self._cleared_marks):
            self._events.append(MessageIgnored(f"mark {event.name!r} returned but never sent"))
            return
        target = _INBOUND.get((self._state, type(event)))
        if target is None:
            raise remote_error(f"{_wire_name(event)} not allowed in state {self._state.name}")
        if isinstance(event, StreamStarted):
            self._stream_sid = event.stream_sid
        elif stream_sid is not None and stream_sid != self._stream_sid:
            raise remote_error(f"message names stream {stream_sid!r}, not {self._stream_sid!r}")
        if isinstance(event, MarkEcho):
            event = MarkReceived(name=event.name, heard=self._settle_mark(event.name))
        self._events.append(event)
        self._state = target

    def _settle_mark(self, name: str) -> bool:
        """Forget a returned mark; return whether its audio was heard."""
        if name in self._pending_marks:
            del self._pending_marks[name]
            return True
        del self._cleared_marks[name]  # ``_accept`` let only a mark we sent through
        return False

    def _mark_message(self, stream_sid: str, name: str) -> str:
        # A name may wait for its return only once, or the return would be ambiguous.
        if not name or name in self._pending_marks or name in self._cleared_marks:
            raise LocalProtocolError(f"mark name {name!r} is empty or still awaiting its return")
        message = encode_mark(stream_sid, name)
        self._pending_marks[name] = None
        return message


def _media_message(stream_sid: str, ulaw: bytes) -> str:
    if not ulaw:
        raise LocalProtocolError("media message without audio")
    return encode_media(stream_sid, bytes(ulaw))


def _wire_name(event: Event | MarkEcho) -> str:
    return _WIRE_NAMES[type(event)]


_WIRE_NAMES: dict[type, str] = {
    StreamConnected: "connected",
    StreamStarted: "start",
    MediaReceived: "media",
    DtmfReceived: "dtmf",
    MarkEcho: "mark",
    StreamStopped: "stop",
}
