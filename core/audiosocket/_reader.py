"""What an AudioSocket frame's payload means: one decoder per kind.

Each decoder checks that the payload fits its kind and returns the inbound event. A
payload that does not fit raises ``FrameError``, which the connection turns into a
``RemoteProtocolError``; nothing else escapes, whatever the bytes.
"""

from __future__ import annotations

__all__ = ["FrameError", "decode_payload"]

import uuid

from ._events import (
    AudioReceived,
    DtmfReceived,
    ErrorReceived,
    Event,
    HangupReceived,
    IdentifierReceived,
)
from ._wire import AUDIO_KIND_RATES, DTMF_DIGITS, ErrorCode, Kind


class FrameError(ValueError):
    """A frame's kind is unknown or its payload does not fit the kind."""


def decode_payload(kind: int, payload: bytes) -> Event:
    """Turn one frame's payload into the event it announces."""
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise FrameError(f"unknown frame kind 0x{kind:02x}")
    return decoder(payload)


def _decode_hangup(payload: bytes) -> HangupReceived:
    if payload:
        raise FrameError(f"hangup frame carries {len(payload)} payload bytes, expected none")
    return HangupReceived()


def _decode_identifier(payload: bytes) -> IdentifierReceived:
    if len(payload) != 16:
        raise FrameError(f"identifier frame carries {len(payload)} bytes, expected a 16-byte UUID")
    return IdentifierReceived(call_id=uuid.UUID(bytes=payload))


def _decode_dtmf(payload: bytes) -> DtmfReceived:
    digit = payload.decode("ascii", errors="replace")
    if len(payload) != 1 or digit not in DTMF_DIGITS:
        raise FrameError(f"DTMF frame payload {payload!r} is not one keypad digit")
    return DtmfReceived(digit=digit)


def _audio_decoder(rate: int):
    def decode(payload: bytes) -> AudioReceived:
        # Samples are two bytes each; an odd length means the sender lost its framing.
        if len(payload) % 2:
            raise FrameError(f"audio frame of {len(payload)} bytes splits a 16-bit sample")
        return AudioReceived(pcm=payload, rate=rate)
    return decode


def _decode_error(payload: bytes) -> ErrorReceived:
    # The code is optional; Asterisk's own codes are a single byte of flags.
    if len(payload) > 1:
        raise FrameError(f"error frame carries {len(payload)} bytes, expected at most one")
    return ErrorReceived(code=ErrorCode(payload[0]) if payload else None)


_DECODERS = {
    Kind.HANGUP: _decode_hangup,
    Kind.IDENTIFIER: _decode_identifier,
    Kind.DTMF: _decode_dtmf,
    Kind.ERROR: _decode_error,
    **{kind: _audio_decoder(rate) for kind, rate in AUDIO_KIND_RATES.items()},
}
