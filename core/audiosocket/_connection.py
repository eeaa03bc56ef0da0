"""The AudioSocket connection: which frame may come when, and what we may send.

All transition logic of the pbx audio connection lives in the two tables below; the
methods only look them up. Feed bytes with ``receive_data`` (``b""`` when the peer
closed the socket), take events with ``events_received``, hand outbound events to
``send`` and write what ``data_to_send`` returns.
"""

from __future__ import annotations

__all__ = ["AudioSocketConnection", "ConnectionState", "Reaction"]

import enum
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import LocalProtocolError, RemoteProtocolError
from ._events import AudioReceived, Event, HangupReceived, SendAudio, SendHangup
from ._reader import FrameError, decode_payload
from ._wire import (
    AUDIO_KIND_RATES,
    HEADER,
    LINE_RATE,
    MAX_PAYLOAD_BYTES,
    Kind,
    audio_kind,
    encode_frame,
    frame_bytes,
    take_frame_or_fail,
)


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


def _states_where(table: Mapping[tuple[ConnectionState, Any], ConnectionState],
                  inputs: Iterable[Any], *, staying: bool) -> frozenset[ConnectionState]:
    """The states in which every one of ``inputs`` is allowed (and, when ``staying``,
    leaves the state as it is)."""
    inputs = tuple(inputs)
    return frozenset(
        state for state in ConnectionState
        if all((state, given) in table and (not staying or table[(state, given)] is state)
               for given in inputs)
    )


# The shortcuts below are read off the tables when the module loads, so they cannot
# drift from them.
#: Caller audio of any kind is a frame that changes no state: the per-frame fast path
#: of ``_handle_frame`` runs only here.
_AUDIO_STAYS = _states_where(_INBOUND, AUDIO_KIND_RATES, staying=True)
#: Our audio changes no state: the per-frame fast path of ``send`` runs only here.
_SENDING_AUDIO_STAYS = _states_where(_OUTBOUND, (SendAudio,), staying=True)
#: A closed socket means what the hangup frame means where the peer may send that frame.
_PEER_MAY_HANG_UP = _states_where(_INBOUND, (Kind.HANGUP,), staying=False)
#: Where we may still send our hangup frame, a peer at fault gets one before the close.
_WE_MAY_HANG_UP = _states_where(_OUTBOUND, (SendHangup,), staying=False)


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
        self._buffer = bytearray()
        self._events: list[Event] = []
        self._outgoing: list[bytes] = []
        self._error: RemoteProtocolError | None = None
        self._answer_at(LINE_RATE)

    def _answer_at(self, rate: int) -> None:
        """Our audio goes at ``rate`` from now on, the caller's rate."""
        #: The rate of the caller's audio, and so of ours.
        self.rate = rate
        self._audio_kind = audio_kind(rate)
        # What the fast path lays out each of our frames with: every one is whole.
        self._audio_bytes = frame_bytes(rate)
        self._audio_header = HEADER.pack(self._audio_kind, self._audio_bytes)
        #: The last audio sent on the fast path, and its frame on the wire.
        self._last_pcm: bytes | None = None
        self._last_wire = b""

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
        while (frame := take_frame_or_fail(self._buffer, self._fail)) is not None:
            self._handle_frame(*frame)

    def audio_in(self, data: bytes) -> bytes | None:
        """The caller's audio when ``data`` is exactly one whole frame of it, of the
        call's kind, where audio changes nothing: the common read, every 20 ms of a
        call, taken at once with no event made. Otherwise None, with nothing taken:
        give ``data`` to ``receive_data``. The audio is at ``rate``."""
        if (self._buffer or self._error is not None or self._state not in _AUDIO_STAYS
                or len(data) < HEADER.size or data[0] != self._audio_kind):
            return None
        length = (data[1] << 8) | data[2]
        if length != len(data) - HEADER.size or length % 2 or length > MAX_PAYLOAD_BYTES:
            return None
        return data[HEADER.size:]

    def events_received(self) -> list[Event]:
        """Return and forget the events parsed so far, oldest first."""
        events, self._events = self._events, []
        return events

    def send(self, event: SendAudio | SendHangup) -> None:
        """Queue one outbound event; raises ``LocalProtocolError`` when the state does
        not allow it (audio before the identifier, anything after our hangup)."""
        if type(event) is SendAudio and self._state in _SENDING_AUDIO_STAYS:
            # The common case, every 20 ms of a call: the table keeps the state.
            self._outgoing.append(self._audio_frame(event.pcm))
            return
        self._send_by_table(event)

    def audio_out(self, pcm: bytes) -> bytes | None:
        """The bytes to write for our audio ``pcm`` when nothing else waits to be sent
        and audio changes nothing: the common send, every 20 ms of a call, made at once
        with no event and nothing queued. Otherwise None, with nothing taken: send
        ``SendAudio(pcm)``. Raises ``LocalProtocolError`` as ``send`` does for audio
        that is not a whole frame at ``rate``."""
        if self._outgoing or self._state not in _SENDING_AUDIO_STAYS:
            return None
        return self._audio_frame(pcm)

    def _audio_frame(self, pcm: bytes) -> bytes:
        # The same audio again (the one frame of silence a quiet line is sent) is laid
        # out once.
        if pcm is not self._last_pcm:
            if len(pcm) != self._audio_bytes:
                self._checked_audio(pcm)  # raises, naming the length wanted
            self._last_wire = self._audio_header + pcm
            self._last_pcm = pcm
        return self._last_wire

    def _send_by_table(self, event: SendAudio | SendHangup) -> None:
        """``send`` for any event in any state: the outbound table decides."""
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

    def _handle_frame(self, kind: int, payload: bytes) -> None:
        if kind == self._audio_kind and self._state in _AUDIO_STAYS and not len(payload) % 2:
            # The common case, every 20 ms of a call: whole-sample audio of the call's
            # kind where the table allows it and keeps the state.
            self._events.append(AudioReceived(pcm=payload, rate=self.rate))
            return
        self._handle_frame_by_table(kind, payload)

    def _handle_frame_by_table(self, kind: int, payload: bytes) -> None:
        """``_handle_frame`` for any frame in any state: the inbound table decides."""
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
            self._answer_at(event.rate)
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
        if self._state in _PEER_MAY_HANG_UP:
            self._events.append(HangupReceived(closed_socket=True))
        self._state = ConnectionState.CLOSED

    def _fail(self, message: str) -> RemoteProtocolError:
        """Record the peer's fault and decide the reaction: hang up a call that was
        introduced, close silently otherwise."""
        if self._state in _WE_MAY_HANG_UP:
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
