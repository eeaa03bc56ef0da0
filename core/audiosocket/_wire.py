"""AudioSocket frames on the wire: constants and the frame layout.

Constants and layout only: what a payload means is ``_reader``, and the order of frames
is ``_connection``. Protocol (Asterisk ``res_audiosocket``): each frame is a three-byte
header — one byte kind, then the payload length as a big-endian unsigned 16-bit
integer — followed by the payload.
"""

from __future__ import annotations

__all__ = [
    "AUDIO_FRAME_BYTES",
    "DTMF_DIGITS",
    "HEADER",
    "AUDIO_KIND_RATES",
    "LINE_RATE",
    "MAX_PAYLOAD_BYTES",
    "ErrorCode",
    "Kind",
    "audio_kind",
    "encode_frame",
    "frame_bytes",
    "read_header",
    "take_frame",
    "take_frame_or_fail",
]

import enum
import struct
from collections.abc import Callable

#: Kind byte, then payload length as big-endian unsigned 16 bits.
HEADER = struct.Struct(">BH")

# spec: telephony.md "Limits" — "Media frame and message: 32 KiB".
MAX_PAYLOAD_BYTES = 32 * 1024

#: The rate of the original audio kind (0x10), which the AudioSocket application sends.
LINE_RATE = 8000

#: What we send per audio frame: 20 ms of 8 kHz signed linear 16-bit mono = 160 samples.
AUDIO_FRAME_BYTES = 320

#: Keys Asterisk reports in a DTMF frame: the twelve of a telephone keypad plus A–D.
DTMF_DIGITS = frozenset("0123456789*#ABCD")


class Kind(enum.IntEnum):
    """The kind byte that opens every frame."""

    #: "Terminate the connection (socket closure is also sufficient)".
    HANGUP = 0x00
    #: "Payload will contain the UUID (16-byte binary representation) for the audio stream".
    IDENTIFIER = 0x01
    #: "Payload is 1 byte (ascii) DTMF digit".
    DTMF = 0x03
    #: "Payload is signed linear, 16-bit, 8kHz, mono PCM (little-endian)".
    AUDIO = 0x10
    #: The same at higher rates: the channel driver (``Dial(AudioSocket/…/c(slin16))``)
    #: carries its channel's own signed linear format, one kind per rate.
    AUDIO_SLIN12 = 0x11
    AUDIO_SLIN16 = 0x12
    AUDIO_SLIN24 = 0x13
    AUDIO_SLIN32 = 0x14
    AUDIO_SLIN44 = 0x15
    AUDIO_SLIN48 = 0x16
    AUDIO_SLIN96 = 0x17
    AUDIO_SLIN192 = 0x18
    #: "An error has occurred; payload is the (optional) application-specific error code".
    ERROR = 0xFF


#: Audio kinds and their sample rates (Asterisk ``res_audiosocket``: slin, slin12 …
#: slin192). slin44 is 44.1 kHz.
AUDIO_KIND_RATES: dict[int, int] = {
    Kind.AUDIO: LINE_RATE,
    Kind.AUDIO_SLIN12: 12000,
    Kind.AUDIO_SLIN16: 16000,
    Kind.AUDIO_SLIN24: 24000,
    Kind.AUDIO_SLIN32: 32000,
    Kind.AUDIO_SLIN44: 44100,
    Kind.AUDIO_SLIN48: 48000,
    Kind.AUDIO_SLIN96: 96000,
    Kind.AUDIO_SLIN192: 192000,
}
_KIND_OF_RATE = {rate: Kind(kind) for kind, rate in AUDIO_KIND_RATES.items()}


def audio_kind(rate: int) -> Kind:
    """The audio kind that carries ``rate``; ``ValueError`` for a rate none carries."""
    try:
        return _KIND_OF_RATE[rate]
    except KeyError:
        raise ValueError(f"no AudioSocket audio kind carries {rate} Hz") from None


def frame_bytes(rate: int) -> int:
    """Bytes of 20 ms of 16-bit mono audio at ``rate``."""
    return rate // 50 * 2


class ErrorCode(enum.IntFlag):
    """Asterisk's error codes: a single byte of bit flags."""

    #: "hangup of calling party".
    CALLER_HANGUP = 0x01
    #: "frame forwarding error".
    FRAME_FORWARDING = 0x02
    #: "memory (allocation) error".
    MEMORY = 0x04


def read_header(buffer: bytes | bytearray) -> tuple[int, int] | None:
    """Return ``(kind, payload_length)`` from the start of ``buffer``, or ``None``
    while fewer than three bytes have arrived."""
    if len(buffer) < HEADER.size:
        return None
    return HEADER.unpack_from(buffer)


def encode_frame(kind: Kind, payload: bytes = b"") -> bytes:
    """Lay out one frame: header then payload."""
    return HEADER.pack(kind, len(payload)) + payload


def take_frame(buffer: bytearray) -> tuple[int, bytes] | None:
    """Remove the first whole frame from ``buffer`` and return ``(kind, payload)``;
    ``None`` while it is incomplete. A header announcing more than
    ``MAX_PAYLOAD_BYTES`` raises ``ValueError`` before its payload is buffered
    (spec: telephony.md "Limits" — "Media frame and message: 32 KiB")."""
    header = read_header(buffer)
    if header is None:
        return None
    kind, length = header
    if length > MAX_PAYLOAD_BYTES:
        raise ValueError(f"frame of {length} bytes exceeds the {MAX_PAYLOAD_BYTES}-byte cap")
    end = HEADER.size + length
    if len(buffer) < end:
        return None
    payload = bytes(buffer[HEADER.size:end])
    del buffer[:end]
    return kind, payload


def take_frame_or_fail(
    buffer: bytearray, fail: Callable[[str], Exception]
) -> tuple[int, bytes] | None:
    """``take_frame``, with an oversized frame turned into ``fail(reason)``, raised: the
    peer's fault, which each side of the connection records its own way."""
    try:
        return take_frame(buffer)
    except ValueError as exc:
        raise fail(str(exc)) from None
