"""Twilio Media Streams JSON text frames ↔ events.

The only module that knows the wire's camelCase field names. ``decode_message`` turns
one text frame into an event and raises ``RemoteProtocolError`` for anything that is
not a well-formed message — whatever the text, nothing else escapes. The ``encode_*``
functions lay out the three messages we send: ``media``, ``mark`` and ``clear``.

Inbound shapes (strings unless noted)::

    {"event": "connected", "protocol"?, "version"?}   (some carriers omit both)
    {"event": "start", "streamSid", "start": {"streamSid", "accountSid", "callSid",
        "tracks": [str], "customParameters": {str: str},
        "mediaFormat": {"encoding", "sampleRate": int, "channels": int}}}
    {"event": "media", "streamSid", "media": {"track", "chunk", "timestamp", "payload"}}
    {"event": "dtmf", "streamSid", "dtmf": {"track", "digit"}}
    {"event": "mark", "streamSid", "mark": {"name"}}
    {"event": "stop", "streamSid", "stop": {"accountSid", "callSid"}}

``sequenceNumber`` is not read: a WebSocket delivers messages in order. An event of
any other name decodes to ``UnknownEvent``: carriers add events, and one this service
does not know is no fault of the carrier's.
"""

from __future__ import annotations

__all__ = [
    "MAX_MESSAGE_BYTES",
    "CloseCode",
    "Inbound",
    "MarkEcho",
    "UnknownEvent",
    "decode_message",
    "encode_clear",
    "encode_mark",
    "encode_media",
    "remote_error",
]

import base64
import enum
import json
from typing import Any, Callable

from ..errors import LocalProtocolError, RemoteProtocolError
from ..records import frozen
from ._events import (
    DtmfReceived,
    Event,
    MediaReceived,
    StreamConnected,
    StreamStarted,
    StreamStopped,
)

# spec: telephony.md "Limits" — "Media frame and message: 32 KiB".
MAX_MESSAGE_BYTES = 32 * 1024

# DESIGN.md "Carrier": base64 μ-law 8 kHz; a stream in any other format cannot be heard.
_MEDIA_FORMAT = {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}

# Keys a carrier reports in a dtmf message.
_DTMF_DIGITS = frozenset("0123456789*#")

# Counters (chunk, timestamp) are short decimal strings; a longer one is not a counter.
_MAX_COUNTER_DIGITS = 18


class CloseCode(enum.IntEnum):
    """WebSocket close codes (RFC 6455 §7.4.1): the ``hint`` of our protocol errors."""

    #: "terminating the connection due to a protocol error".
    PROTOCOL_ERROR = 1002
    #: "received a type of data it cannot accept".
    UNSUPPORTED_DATA = 1003
    #: "received a message that is too big for it to process".
    MESSAGE_TOO_BIG = 1009


@frozen
class MarkEcho:
    """A returned mark before the connection knows whether its audio was heard."""

    name: str


@frozen
class UnknownEvent:
    """A well-formed message whose event this service does not know."""

    name: str


@frozen
class Inbound:
    """One decoded message: the stream it names (``None`` for ``connected``) and what
    it says."""

    stream_sid: str | None
    event: Event | MarkEcho | UnknownEvent


def remote_error(message: str, code: CloseCode = CloseCode.PROTOCOL_ERROR) -> RemoteProtocolError:
    """The error for a carrier that broke the protocol; ``hint`` is the close code."""
    return RemoteProtocolError(message, hint=code)


def decode_message(text: str) -> Inbound:
    """Decode one text frame from the carrier."""
    if len(text) > MAX_MESSAGE_BYTES or len(_utf8(text)) > MAX_MESSAGE_BYTES:
        raise remote_error(f"message exceeds {MAX_MESSAGE_BYTES} bytes", CloseCode.MESSAGE_TOO_BIG)
    message = _object(_parse_json(text), "message")
    name = _text(message, "event", "message")
    decoder = _DECODERS.get(name)
    if decoder is None:
        # Whatever else it holds is not read; a stream name, when given, is still checked.
        sid = message.get("streamSid")
        return Inbound(stream_sid=sid if isinstance(sid, str) else None,
                       event=UnknownEvent(name[:64]))
    event = decoder(message)
    stream_sid = None if name == "connected" else _text(message, "streamSid", "message")
    return Inbound(stream_sid=stream_sid, event=event)


def encode_media(stream_sid: str, ulaw: bytes) -> str:
    payload = base64.b64encode(ulaw).decode("ascii")
    return _dump({"event": "media", "streamSid": stream_sid, "media": {"payload": payload}})


def encode_mark(stream_sid: str, name: str) -> str:
    return _dump({"event": "mark", "streamSid": stream_sid, "mark": {"name": name}})


def encode_clear(stream_sid: str) -> str:
    return _dump({"event": "clear", "streamSid": stream_sid})


def _dump(message: dict[str, Any]) -> str:
    text = json.dumps(message, separators=(",", ":"))
    if len(text) > MAX_MESSAGE_BYTES:
        raise LocalProtocolError(
            f"outbound message of {len(text)} bytes exceeds {MAX_MESSAGE_BYTES}"
        )
    return text


def _utf8(text: str) -> bytes:
    # Lone surrogates cannot be UTF-8; count them as the three bytes a sender would use.
    return text.encode("utf-8", "surrogatepass")


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and over-long integers; RecursionError
        # covers deeply nested arrays.
        raise remote_error(f"message is not JSON: {type(exc).__name__}") from None


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise remote_error(f"{where} must be a JSON object")
    return value


def _text(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise remote_error(f"{where}.{key} must be a string")
    return value


def _counter(obj: dict[str, Any], key: str, where: str) -> int:
    """A non-negative count sent as a decimal string (Twilio) or a JSON integer."""
    value = obj.get(key)
    if type(value) is int and value >= 0:
        return value
    if (
        isinstance(value, str)
        and 0 < len(value) <= _MAX_COUNTER_DIGITS
        and value.isascii()
        and value.isdigit()
    ):
        return int(value)
    raise remote_error(f"{where}.{key} must be a non-negative decimal count")


def _decode_connected(message: dict[str, Any]) -> StreamConnected:
    return StreamConnected(
        protocol=_optional_text(message, "protocol", "connected"),
        version=_optional_text(message, "version", "connected"),
    )


def _optional_text(obj: dict[str, Any], key: str, where: str) -> str:
    """A string field some carriers omit: ``""`` when absent."""
    return _text(obj, key, where) if key in obj else ""


def _decode_start(message: dict[str, Any]) -> StreamStarted:
    start = _object(message.get("start"), "start")
    stream_sid = _text(start, "streamSid", "start")
    if message.get("streamSid") != stream_sid:
        raise remote_error("start.streamSid differs from the message's streamSid")
    _check_media_format(_object(start.get("mediaFormat"), "start.mediaFormat"))
    return StreamStarted(
        stream_sid=stream_sid,
        call_sid=_text(start, "callSid", "start"),
        account_sid=_text(start, "accountSid", "start"),
        tracks=_tracks(start),
        custom_parameters=_custom_parameters(start),
    )


def _check_media_format(media_format: dict[str, Any]) -> None:
    for key, expected in _MEDIA_FORMAT.items():
        value = media_format.get(key)
        if type(value) is not type(expected) or value != expected:
            raise remote_error(
                f"start.mediaFormat.{key} is {value!r}, only {expected!r} is accepted",
                CloseCode.UNSUPPORTED_DATA,
            )


def _tracks(start: dict[str, Any]) -> tuple[str, ...]:
    tracks = start.get("tracks")
    if not isinstance(tracks, list) or not all(isinstance(t, str) for t in tracks):
        raise remote_error("start.tracks must be a list of strings")
    return tuple(tracks)


def _custom_parameters(start: dict[str, Any]) -> dict[str, str]:
    # Absent when the instruction named no <Parameter>.
    parameters = _object(start.get("customParameters", {}), "start.customParameters")
    if not all(isinstance(value, str) for value in parameters.values()):
        raise remote_error("start.customParameters values must be strings")
    return dict(parameters)


def _decode_media(message: dict[str, Any]) -> MediaReceived:
    media = _object(message.get("media"), "media")
    try:
        ulaw = base64.b64decode(_text(media, "payload", "media"), validate=True)
    except ValueError:
        raise remote_error("media.payload is not base64") from None
    return MediaReceived(
        ulaw=ulaw,
        track=_text(media, "track", "media"),
        chunk=_counter(media, "chunk", "media"),
        timestamp=_counter(media, "timestamp", "media"),
    )


def _decode_dtmf(message: dict[str, Any]) -> DtmfReceived:
    digit = _text(_object(message.get("dtmf"), "dtmf"), "digit", "dtmf")
    if digit not in _DTMF_DIGITS:
        raise remote_error(f"dtmf.digit {digit!r} is not one keypad digit")
    return DtmfReceived(digit=digit)


def _decode_mark(message: dict[str, Any]) -> MarkEcho:
    return MarkEcho(name=_text(_object(message.get("mark"), "mark"), "name", "mark"))


def _decode_stop(message: dict[str, Any]) -> StreamStopped:
    return StreamStopped(call_sid=_text(_object(message.get("stop"), "stop"), "callSid", "stop"))


_DECODERS: dict[str, Callable[[dict[str, Any]], Event | MarkEcho]] = {
    "connected": _decode_connected,
    "start": _decode_start,
    "media": _decode_media,
    "dtmf": _decode_dtmf,
    "mark": _decode_mark,
    "stop": _decode_stop,
}
