"""Events of an AudioSocket connection.

Inbound events are past-tense facts about what the telephone system sent; outbound
ones are imperatives handed to ``AudioSocketConnection.send``. All are frozen, slotted
dataclasses and carry no wire detail beyond their payload.
"""

from __future__ import annotations

__all__ = [
    "AudioReceived",
    "DtmfReceived",
    "ErrorReceived",
    "Event",
    "HangupReceived",
    "IdentifierReceived",
    "SendAudio",
    "SendHangup",
]

import uuid

from ..records import frozen
from ._wire import LINE_RATE, ErrorCode


@frozen
class IdentifierReceived:
    """The telephone system introduced the call with the one-off identifier from its
    answer request. Redeem it as a ticket before any audio is sent."""

    call_id: uuid.UUID


@frozen
class AudioReceived:
    """Caller audio: signed linear 16-bit little-endian mono at ``rate`` (8 kHz for
    the original audio kind, the channel's own rate for the higher-rate kinds)."""

    pcm: bytes
    rate: int = LINE_RATE


@frozen
class DtmfReceived:
    """The caller pressed a key: one of ``0-9``, ``*``, ``#``, ``A-D``."""

    digit: str


@frozen
class HangupReceived:
    """The telephone system ended the call.

    ``closed_socket`` is true when it did so by closing the connection rather than by
    sending the hangup frame; the protocol allows both and they mean the same.
    """

    closed_socket: bool = False


@frozen
class ErrorReceived:
    """The telephone system reported an error and stops carrying the call.

    ``code`` is Asterisk's bit-packed error byte, or ``None`` when none was given.
    """

    code: ErrorCode | None

    @property
    def caller_hung_up(self) -> bool:
        """Whether the error is the calling party hanging up, which is an ordinary end
        of a call rather than a fault."""
        return self.code is not None and bool(self.code & ErrorCode.CALLER_HANGUP)


@frozen
class SendAudio:
    """Play 20 ms of audio to the caller: signed linear 16-bit little-endian mono at
    the rate the caller's side uses (``AudioSocketConnection.rate``), so 320 bytes at
    8 kHz. It goes out in the same kind as the caller's audio."""

    pcm: bytes


@frozen
class SendHangup:
    """End the call from our side. Nothing may be sent afterwards."""


Event = IdentifierReceived | AudioReceived | DtmfReceived | HangupReceived | ErrorReceived
