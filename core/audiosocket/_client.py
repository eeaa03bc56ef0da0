"""The telephone system's side of an AudioSocket connection, as Asterisk plays it.

``AudioSocketClient`` mirrors ``AudioSocketConnection``: it is what Asterisk's
``res_audiosocket`` does for a call the dialplan handed over, so a simulator or a test
can ring the pbx listener exactly as a telephone system would. The identifier frame is
queued first, before anything else can be; caller audio (in the kind of the channel's
rate: 0x10 for 8 kHz, 0x12 for slin16 …) and keys follow; the caller hanging up
closes the socket (Asterisk's own way). Of what the service sends, only audio and
hangup (0x00) are accepted: on any other kind Asterisk drops the call — it closes
the socket without a word (it never sends an error frame, 0xff).
"""

from __future__ import annotations

__all__ = ["AudioSocketClient", "ClientState"]

import enum
import uuid

from ..errors import LocalProtocolError, RemoteProtocolError
from ._events import AudioReceived, HangupReceived
from ._wire import (
    AUDIO_KIND_RATES,
    DTMF_DIGITS,
    LINE_RATE,
    MAX_PAYLOAD_BYTES,
    Kind,
    audio_kind,
    encode_frame,
    take_frame_or_fail,
)


class ClientState(enum.Enum):
    """Where the telephone system's side of a connection stands."""

    #: The identifier is queued or sent: audio and keys flow both ways.
    OPEN = "open"
    #: The caller hung up: the adapter closes the socket; nothing more is sent or read.
    CALLER_HUNG_UP = "caller_hung_up"
    #: The service hung up (a hangup frame or a closed socket).
    SERVICE_HUNG_UP = "service_hung_up"
    #: The service sent what Asterisk does not accept: the call is dropped (close the
    #: socket; nothing is sent).
    FAILED = "failed"


# Kinds Asterisk accepts from the service: audio to play and the end of the call.
_ACCEPTED = frozenset({Kind.HANGUP, *AUDIO_KIND_RATES})


class AudioSocketClient:
    """Sans-IO Asterisk side of one AudioSocket call.

    Construct it with the identifier the answer request returned (and the channel's
    ``rate``) and write ``data_to_send()`` at once: the identifier frame goes first.
    Then send 20 ms of caller audio at a time with ``send_audio``, keys with ``send_dtmf``, feed what the
    socket reads to ``receive_data`` and take ``AudioReceived`` / ``HangupReceived``
    from ``events_received``. ``hang_up`` ends the call from the caller's side: close
    the socket after it.
    """

    def __init__(self, call_id: uuid.UUID, rate: int = LINE_RATE) -> None:
        self._kind = audio_kind(rate)
        self.rate = rate
        #: The rates of the audio the service sent, as it sent them.
        self.rates_received: set[int] = set()
        self._state = ClientState.OPEN
        self._buffer = bytearray()
        self._events: list[AudioReceived | HangupReceived] = []
        self._outgoing = bytearray(encode_frame(Kind.IDENTIFIER, call_id.bytes))
        self._error: RemoteProtocolError | None = None

    @property
    def state(self) -> ClientState:
        return self._state

    def send_audio(self, pcm: bytes) -> None:
        """Queue one frame of caller audio: signed linear 16-bit little-endian at the
        channel's rate."""
        self._require_open("audio")
        if not pcm or len(pcm) % 2 or len(pcm) > MAX_PAYLOAD_BYTES:
            raise LocalProtocolError(f"audio frame of {len(pcm)} bytes is not whole samples")
        self._outgoing += encode_frame(self._kind, bytes(pcm))

    def send_dtmf(self, digit: str) -> None:
        """Queue one key press: ``0-9``, ``*``, ``#`` or ``A-D``."""
        self._require_open("a key")
        if len(digit) != 1 or digit not in DTMF_DIGITS:
            raise LocalProtocolError(f"{digit!r} is not one keypad digit")
        self._outgoing += encode_frame(Kind.DTMF, digit.encode("ascii"))

    def hang_up(self) -> None:
        """The caller hung up: Asterisk closes the socket without a frame."""
        self._require_open("a hangup")
        self._state = ClientState.CALLER_HUNG_UP

    def data_to_send(self) -> bytes:
        """Return and forget the bytes to write to the socket."""
        data, self._outgoing = bytes(self._outgoing), bytearray()
        return data

    def events_received(self) -> list[AudioReceived | HangupReceived]:
        """Return and forget the events parsed so far, oldest first."""
        events, self._events = self._events, []
        return events

    def receive_data(self, data: bytes) -> None:
        """Feed bytes read from the socket; ``b""`` means the service closed it.

        Raises ``RemoteProtocolError`` when the service sent a frame Asterisk does not
        accept: close the socket (Asterisk drops the call without a word).
        """
        if self._error is not None:
            raise self._error
        if self._state is not ClientState.OPEN:
            return  # Asterisk stops reading once the call is over
        if not data:
            if self._buffer:
                raise self._fail(f"socket closed inside a frame ({len(self._buffer)} bytes)")
            self._events.append(HangupReceived(closed_socket=True))
            self._state = ClientState.SERVICE_HUNG_UP
            return
        self._buffer += data
        while self._state is ClientState.OPEN and (
                frame := take_frame_or_fail(self._buffer, self._fail)) is not None:
            self._handle_frame(*frame)

    def _handle_frame(self, kind: int, payload: bytes) -> None:
        if kind not in _ACCEPTED:
            raise self._fail(f"the service sent a frame of kind {_kind_name(kind)}, "
                             "which is not accepted")
        if kind == Kind.HANGUP:
            if payload:
                raise self._fail(f"hangup frame carries {len(payload)} payload bytes")
            self._events.append(HangupReceived())
            self._state = ClientState.SERVICE_HUNG_UP
            return
        if not payload or len(payload) % 2:
            raise self._fail(f"audio frame of {len(payload)} bytes is not whole samples")
        rate = AUDIO_KIND_RATES[kind]
        self.rates_received.add(rate)
        self._events.append(AudioReceived(pcm=payload, rate=rate))

    def _require_open(self, what: str) -> None:
        if self._state is not ClientState.OPEN:
            raise LocalProtocolError(f"cannot send {what} in state {self._state.name}")

    def _fail(self, message: str) -> RemoteProtocolError:
        self._outgoing.clear()  # nothing more goes out: the call is dropped
        self._state = ClientState.FAILED
        self._buffer.clear()
        self._error = RemoteProtocolError(message)
        return self._error


def _kind_name(kind: int) -> str:
    try:
        return Kind(kind).name
    except ValueError:
        return f"0x{kind:02x}"
