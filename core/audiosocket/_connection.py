"""The AudioSocket connection: which frame may come when, and what we may send.

All transition logic of the pbx audio connection lives in the two tables below; the
methods only look them up. Feed bytes with ``receive_data`` (``b""`` when the peer
closed the socket), take events with ``events_received``, hand outbound events to
``send`` and write what ``data_to_send`` returns.
"""

from __future__ import annotations

import enum

from ..errors import LocalProtocolError, RemoteProtocolError
from ._events import AudioReceived, Event, HangupReceived, SendAudio, SendHangup
from ._reader import FrameError, decode_payload
from ._wire import (
    AUDIO_KIND_RATES,
    LINE_RATE,
    Kind,
    audio_kind,
    encode_frame,
    frame_bytes,
    take_frame,
)

__all__ = ["AudioSocketConnection", "ConnectionState", "Reaction"]


class ConnectionState(enum.Enum):
    """Where an AudioSocket connection stands."""

    #: Connected; the telephone system has not yet introduced the call. Only the
    #: identifier frame may come, and we say nothing.
    AWAITING_IDENTIFIER = "awaiting_identifier"
    #: The identifier arrived: audio and keys flow both ways.
    OPEN = "open"
    #: We sent the hangup frame; frames the peer had already sent are still read.
    HANGING_UP = "hanging_up"
    #: The peer hung up or reported an error; we may still send our hangup frame.
    PEER_HUNG_UP = "peer_hung_up"
    #: Nothing more is read or sent: both sides ended, the socket closed, or the peer
    #: broke the protocol.
    CLOSED = "closed"


class Reaction(enum.Enum):
    """The ``hint`` of a ``RemoteProtocolError``: how the adapter ends the connection."""

    #: Close the socket without sending anything. Before the identifier the peer has
    #: not proved who it is. spec: telephony.md "Pbx ticket" — "closed without a word".
    CLOSE_SILENTLY = "close_silently"
    #: A hangup frame has been queued: write ``data_to_send()``, then close the socket.
    HANG_UP = "hang_up"


_S = ConnectionState

# (state, kind of the peer's frame) -> next state. A missing pair is a protocol error
# of the peer: before the identifier nothing else may come (spec: telephony.md "Pbx
# ticket"), and the identifier comes exactly once.
_INBOUND: dict[tuple[ConnectionState, int], ConnectionState] = {
    (_S.AWAITING_IDENTIFIER, Kind.IDENTIFIER): _S.OPEN,
    (_S.OPEN, Kind.DTMF): _S.OPEN,
    (_S.OPEN, Kind.HANGUP): _S.PEER_HUNG_UP,
    (_S.OPEN, Kind.ERROR): _S.PEER_HUNG_UP,
    # After our hangup the peer's frames already on the way still arrive.
    (_S.HANGING_UP, Kind.DTMF): _S.HANGING_UP,
    (_S.HANGING_UP, Kind.HANGUP): _S.CLOSED,
    (_S.HANGING_UP, Kind.ERROR): _S.CLOSED,
}

# Audio of every rate flows while the call is open, and still arrives after our hangup.
_INBOUND.update({(state, kind): state for kind in AUDIO_KIND_RATES
                 for state in (_S.OPEN, _S.HANGING_UP)})

_KNOWN_KINDS = frozenset(Kind)

# (state, outbound event type) -> next state. A missing pair is our own misuse.
_OUTBOUND: dict[tuple[ConnectionState, type], ConnectionState] = {
    (_S.OPEN, SendAudio): _S.OPEN,
    (_S.OPEN, SendHangup): _S.HANGING_UP,
    (_S.PEER_HUNG_UP, SendHangup): _S.CLOSED,
}


class AudioSocketConnection:
    """Sans-IO AudioSocket server side of one pbx call.

    The telephone system connects, introduces the call with ``IdentifierReceived``
    (redeem it as a ticket; close without a word when rejected), then sends caller
    audio and keys. We answer with 20 ms ``SendAudio`` frames and end with
    ``SendHangup``. We answer in the kind, so at the rate, of the caller's audio:
    ``rate`` is 8 kHz until audio of another kind arrived.
    """

    def __init__(self) -> None:
        self._state = ConnectionState.AWAITING_IDENTIFIER
        #: The rate of the caller's audio, and so of ours.
        self.rate = LINE_RATE
        self._audio_kind = Kind.AUDIO
        self._buffer = bytearray()
        self._events: list[Event] = []
        self._outgoing: list[bytes] = []
        self._error: RemoteProtocolError | None = None

    @property
    def state(self) -> ConnectionState:
        return self._state

    def receive_data(self, data: bytes) -> None:
        """Feed bytes read from the socket; ``b""`` means the peer closed it.

        Raises ``RemoteProtocolError`` when the peer broke the protocol; its ``hint`` is
        a ``Reaction``. Events parsed before the fault stay in ``events_received()``.
        """
        if self._error is not None:
            raise self._error
        if not data:
            self._receive_eof()
            return
        if self._state is ConnectionState.CLOSED:
            raise self._fail("bytes arrived after the connection ended")
        self._buffer += data
        while (frame := self._next_frame()) is not None:
            self._handle_frame(*frame)

    def events_received(self) -> list[Event]:
        """Return and forget the events parsed so far, oldest first."""
        events, self._events = self._events, []
        return events

    def send(self, event: SendAudio | SendHangup) -> None:
        """Queue one outbound event; raises ``LocalProtocolError`` when the state does
        not allow it (audio before the identifier, anything after our hangup)."""
        if type(event) is SendAudio and self._state is ConnectionState.OPEN:
            # The common case, every 20 ms of a call: (OPEN, SendAudio) stays OPEN.
            self._outgoing.append(encode_frame(self._audio_kind, self._checked_audio(event.pcm)))
            return
        target = _OUTBOUND.get((self._state, type(event)))
        if target is None:
            raise LocalProtocolError(
                f"cannot send {type(event).__name__} in state {self._state.name}"
            )
        if isinstance(event, SendAudio):
            self._outgoing.append(encode_frame(self._audio_kind, self._checked_audio(event.pcm)))
        else:
            self._outgoing.append(encode_frame(Kind.HANGUP))
        self._state = target

    def data_to_send(self) -> bytes:
        """Return and forget the bytes to write to the socket."""
        data = b"".join(self._outgoing)  # one frame: the frame itself, not a copy
        self._outgoing.clear()
        return data

    def _next_frame(self) -> tuple[int, bytes] | None:
        try:
            return take_frame(self._buffer)
        except ValueError as exc:
            raise self._fail(str(exc)) from None

    def _handle_frame(self, kind: int, payload: bytes) -> None:
        state = self._state
        if (kind == self._audio_kind and (state is _S.OPEN or state is _S.HANGING_UP)
                and not len(payload) % 2):
            # The common case, every 20 ms of a call: whole-sample audio of the call's
            # kind where the tables below allow it, which changes no state.
            self._events.append(AudioReceived(pcm=payload, rate=self.rate))
            return
        # Order before content: a well-formed frame at the wrong time is named as such.
        target = _INBOUND.get((self._state, kind))
        if target is None and kind in _KNOWN_KINDS:
            raise self._fail(self._out_of_order_message(Kind(kind)))
        try:
            event = decode_payload(kind, payload)
        except FrameError as exc:
            raise self._fail(str(exc)) from None
        assert target is not None  # only known kinds decode, and those were checked
        if isinstance(event, AudioReceived):
            # The caller's side chose its rate: we answer in the same kind from now on.
            self.rate, self._audio_kind = event.rate, audio_kind(event.rate)
        self._events.append(event)
        self._state = target

    def _out_of_order_message(self, kind: Kind) -> str:
        if self._state is ConnectionState.AWAITING_IDENTIFIER:
            return f"the first frame must be the identifier, got {kind.name}"
        return f"{kind.name} frame not allowed in state {self._state.name}"

    def _receive_eof(self) -> None:
        if self._buffer:
            raise self._fail(
                f"connection closed inside a frame ({len(self._buffer)} bytes pending)"
            )
        # Closing the socket is a hangup ("socket closure is also sufficient"); report
        # it unless the peer had already ended or never introduced a call.
        if self._state in (ConnectionState.OPEN, ConnectionState.HANGING_UP):
            self._events.append(HangupReceived(closed_socket=True))
        self._state = ConnectionState.CLOSED

    def _fail(self, message: str) -> RemoteProtocolError:
        """Record the peer's fault and decide the reaction: hang up a call that was
        introduced, close silently otherwise."""
        if self._state in (ConnectionState.OPEN, ConnectionState.PEER_HUNG_UP):
            self._outgoing.append(encode_frame(Kind.HANGUP))
            reaction = Reaction.HANG_UP
        else:
            reaction = Reaction.CLOSE_SILENTLY
        self._state = ConnectionState.CLOSED
        self._buffer.clear()
        self._error = RemoteProtocolError(message, hint=reaction)
        return self._error

    def _checked_audio(self, pcm: bytes) -> bytes:
        # We pace the line in 20 ms frames and never send an empty one.
        expected = frame_bytes(self.rate)
        if len(pcm) != expected:
            raise LocalProtocolError(
                f"audio frame must be {expected} bytes (20 ms at {self.rate} Hz), got {len(pcm)}"
            )
        return bytes(pcm)
