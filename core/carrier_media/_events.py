"""Events of a carrier media stream (Twilio Media Streams).

Inbound events are past-tense facts about what the carrier sent; outbound ones are
imperatives handed to ``CarrierConnection.send``. Fields are snake_case; the wire's
camelCase names appear only in ``_codec``.
"""

from __future__ import annotations

__all__ = [
    "ClearAudio",
    "DtmfReceived",
    "Event",
    "MarkReceived",
    "MediaReceived",
    "MessageIgnored",
    "SendMark",
    "SendMedia",
    "StreamConnected",
    "StreamStarted",
    "StreamStopped",
]

from dataclasses import field

from ..records import frozen


@frozen
class StreamConnected:
    """The carrier opened the stream and named its protocol (``Call``, ``1.0.0``);
    carriers that speak the same stream but omit the names give ``""``."""

    protocol: str
    version: str


@frozen
class StreamStarted:
    """The carrier described the stream. ``custom_parameters`` holds the ``<Parameter>``
    values of the instruction, among them the single-use ticket to redeem before
    answering."""

    stream_sid: str
    call_sid: str
    account_sid: str
    tracks: tuple[str, ...]
    custom_parameters: dict[str, str] = field(default_factory=dict)


@frozen
class MediaReceived:
    """Caller audio: μ-law, 8 kHz, mono. ``chunk`` counts the carrier's media messages
    from 1; ``timestamp`` is milliseconds since the stream started."""

    ulaw: bytes
    track: str
    chunk: int
    timestamp: int


@frozen
class DtmfReceived:
    """The caller pressed a key: one of ``0-9``, ``*``, ``#``."""

    digit: str


@frozen
class MarkReceived:
    """The carrier returned a mark we sent.

    ``heard`` is true when the audio queued before the mark has played to the caller,
    and false when a ``ClearAudio`` sent after the mark discarded that audio.
    """

    name: str
    heard: bool


@frozen
class MessageIgnored:
    """The carrier sent something the stream has no use for — an event this service
    does not know (carriers add events over time), or a mark it never sent — which
    changes nothing. ``reason`` says what, for the log."""

    reason: str


@frozen
class StreamStopped:
    """The carrier ended the stream: the caller hung up or the call moved on."""

    call_sid: str


@frozen
class SendMedia:
    """Play μ-law 8 kHz mono audio to the caller (queued behind earlier audio)."""

    ulaw: bytes


@frozen
class SendMark:
    """Ask the carrier to return ``name`` once the audio queued so far has played."""

    name: str


@frozen
class ClearAudio:
    """Discard audio the carrier has queued but not yet played (the caller barged in)."""


Event = (
    StreamConnected | StreamStarted | MediaReceived | DtmfReceived | MarkReceived
    | MessageIgnored | StreamStopped
)
