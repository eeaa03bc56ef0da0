"""The carrier's side of a media stream, as Twilio plays it.

``CarrierStreamClient`` mirrors ``CarrierConnection``: it speaks Twilio Media Streams
from the carrier's end, so a simulator or a test can connect a call to the media
WebSocket exactly as the carrier would. It writes ``connected`` and ``start`` (with
the ``<Parameter>`` values of the instruction as ``customParameters``), then caller
audio as ``media`` messages of base64 μ-law with the carrier's chunk and timestamp
counters, keys as ``dtmf`` and finally ``stop``. What the service sends — ``media``,
``mark``, ``clear`` — goes through a ``Playout``: audio plays at the call's rate, a
mark comes back once the audio before it has played, and ``clear`` drops the queued
audio and returns every waiting mark at once.
"""

from __future__ import annotations

__all__ = [
    "AudioArrived",
    "CarrierStreamClient",
    "ClearArrived",
    "ClientStreamState",
    "MarkArrived",
    "ULAW_FRAME_BYTES",
]

import base64
import binascii
import enum
import json
from typing import Any, Mapping

from ..errors import LocalProtocolError, RemoteProtocolError
from ..playout import Played, Playout
from ..records import frozen
from ._codec import MAX_MESSAGE_BYTES, CloseCode, _object, _parse_json, _text, remote_error
from ._side import StreamSide

#: 20 ms of μ-law 8 kHz mono: what the carrier sends per media message.
ULAW_FRAME_BYTES = 160
_ULAW_SILENCE = b"\xff"
_MEDIA_FORMAT = {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
_DTMF_DIGITS = frozenset("0123456789*#")


class ClientStreamState(enum.Enum):
    """Where the carrier's side of a stream stands."""

    #: ``connected`` and ``start`` are queued: audio flows both ways.
    STREAMING = "streaming"
    #: ``stop`` is queued: the caller hung up; close the socket after writing it.
    STOPPED = "stopped"
    #: The service broke the protocol: close with the error's close code.
    FAILED = "failed"


@frozen
class AudioArrived:
    """The service sent audio for the caller (μ-law 8 kHz); it is queued to play."""

    ulaw: bytes


@frozen
class MarkArrived:
    """The service queued a mark behind its audio."""

    name: str


@frozen
class ClearArrived:
    """The service cleared the audio queued for the caller (barge-in)."""

    discarded_bytes: int


ClientEvent = AudioArrived | MarkArrived | ClearArrived


class CarrierStreamClient(StreamSide):
    """Sans-IO carrier side of one media WebSocket.

    Write each string of ``data_to_send()`` as one text message (``connected`` and
    ``start`` are waiting from the start). Every 20 ms call ``send_media`` with the
    caller's next frame and ``play`` for what the caller hears in that frame; feed
    each text message read to ``receive_text``. ``stop`` ends the stream.
    """

    _FAILED = ClientStreamState.FAILED

    def __init__(self, *, stream_sid: str, call_sid: str, account_sid: str,
                 custom_parameters: Mapping[str, str]) -> None:
        self.stream_sid = stream_sid
        self._call_sid = call_sid
        self._account_sid = account_sid
        self._state = ClientStreamState.STREAMING
        self._sequence = 0
        self._chunk = 0
        self._outgoing: list[str] = []
        self._events: list[ClientEvent] = []
        self._error: RemoteProtocolError | None = None
        self.playout = Playout(ULAW_FRAME_BYTES, _ULAW_SILENCE)
        self._queue("connected", {"protocol": "Call", "version": "1.0.0"}, stream=False)
        self._queue("start", {"start": {
            "accountSid": account_sid, "streamSid": stream_sid, "callSid": call_sid,
            "tracks": ["inbound"], "customParameters": dict(custom_parameters),
            "mediaFormat": dict(_MEDIA_FORMAT)}})

    @property
    def state(self) -> ClientStreamState:
        return self._state

    def send_media(self, ulaw: bytes, timestamp_ms: int) -> None:
        """Queue one frame of caller audio; ``timestamp_ms`` counts from the start."""
        self._require_streaming("media")
        if not ulaw:
            raise LocalProtocolError("media message without audio")
        self._chunk += 1
        self._queue("media", {"media": {
            "track": "inbound", "chunk": str(self._chunk), "timestamp": str(timestamp_ms),
            "payload": base64.b64encode(ulaw).decode("ascii")}})

    def send_dtmf(self, digit: str) -> None:
        """Queue one key press: ``0-9``, ``*`` or ``#``."""
        self._require_streaming("dtmf")
        if len(digit) != 1 or digit not in _DTMF_DIGITS:
            raise LocalProtocolError(f"{digit!r} is not one keypad digit")
        self._queue("dtmf", {"dtmf": {"track": "inbound_track", "digit": digit}})

    def send_event(self, event: str, body: Mapping[str, Any]) -> None:
        """Queue a message of another event than this client knows: what a carrier
        that added events to its stream would send (``body`` becomes its fields)."""
        self._require_streaming(event)
        if event in ("connected", "start", "media", "dtmf", "mark", "stop"):
            raise LocalProtocolError(f"{event!r} has its own method")
        self._queue(event, dict(body))

    def stop(self) -> None:
        """The caller hung up: queue ``stop``; nothing more is sent afterwards."""
        self._require_streaming("stop")
        self._queue("stop", {"stop": {"accountSid": self._account_sid,
                                      "callSid": self._call_sid}})
        self._state = ClientStreamState.STOPPED

    def play(self) -> Played:
        """Play 20 ms for the caller: the line's queued audio, or silence. Marks the
        frame reached are returned to the service."""
        played = self.playout.take()
        if self._state is ClientStreamState.STREAMING:
            for name in played.marks:
                self._queue("mark", {"mark": {"name": name}})
        return played

    def data_to_send(self) -> list[str]:
        """Return and forget the text messages to write, in order."""
        messages, self._outgoing = self._outgoing, []
        return messages

    def events_received(self) -> list[ClientEvent]:
        """Return and forget what the service sent, oldest first."""
        events, self._events = self._events, []
        return events

    def _take_text(self, text: str) -> None:
        if self._state is not ClientStreamState.STREAMING:
            return  # after stop the carrier reads nothing more
        self._accept(text)

    def _accept(self, text: str) -> None:
        if len(text.encode("utf-8", "surrogatepass")) > MAX_MESSAGE_BYTES:
            raise remote_error(f"message exceeds {MAX_MESSAGE_BYTES} bytes",
                               CloseCode.MESSAGE_TOO_BIG)
        message = _object(_parse_json(text), "message")
        event = _text(message, "event", "message")
        if _text(message, "streamSid", "message") != self.stream_sid:
            raise remote_error(f"{event} names another stream than {self.stream_sid!r}")
        if event == "media":
            ulaw = _payload(_object(message.get("media"), "media"))
            self.playout.push_audio(ulaw)
            self._events.append(AudioArrived(ulaw))
        elif event == "mark":
            name = _text(_object(message.get("mark"), "mark"), "name", "mark")
            if not name:
                raise remote_error("mark.name is empty")
            self.playout.push_mark(name)
            self._events.append(MarkArrived(name))
        elif event == "clear":
            discarded = self.playout.queued_bytes
            for name in self.playout.clear():
                self._queue("mark", {"mark": {"name": name}})
            self._events.append(ClearArrived(discarded))
        else:
            raise remote_error(f"unknown event {event!r} from the service")

    def _queue(self, event: str, body: dict[str, Any], *, stream: bool = True) -> None:
        # ``connected`` opens the socket before any stream exists: it carries neither
        # a sequence number nor the stream's name.
        message: dict[str, Any] = {"event": event}
        if stream:
            self._sequence += 1
            message["sequenceNumber"] = str(self._sequence)
            message["streamSid"] = self.stream_sid
        message.update(body)
        self._outgoing.append(json.dumps(message, separators=(",", ":")))

    def _require_streaming(self, what: str) -> None:
        if self._state is not ClientStreamState.STREAMING:
            raise LocalProtocolError(f"cannot send {what} in state {self._state.name}")


def _payload(media: dict[str, Any]) -> bytes:
    try:
        ulaw = base64.b64decode(_text(media, "payload", "media"), validate=True)
    except (binascii.Error, ValueError):
        raise remote_error("media.payload is not base64") from None
    if not ulaw:
        raise remote_error("media message without audio")
    return ulaw
