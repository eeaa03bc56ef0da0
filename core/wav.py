"""WAV files as bytes: the header layouts and the sample interleaving, nothing else.

What belongs here: the kinds of WAV the service writes — PCM16 (one turn of speech
sent to a recogniser; a recording served for playing) and the call recording, G.711
μ-law with one channel per side — and ``read_wav_header``, which finds the format and
the data of a WAV. Opening, writing and patching files is the adapters' business
(``adapters/recorder.py``); companding is ``kernels.ulaw``.

A recording is written while the call runs, so its header is written first with the
sizes so far and rewritten in place as the file grows: ``ulaw_header(frames)`` always
has the same length (``ULAW_HEADER_BYTES``), and the data begins right after it.

spec: telephony.md "Recording" — two channels (caller and line), 8 kHz companded.
Non-PCM formats carry a ``fact`` chunk with the number of sample frames (the RIFF WAVE
rules of 1991 and Microsoft's WAVEFORMATEX), and μ-law's ``fmt`` chunk is the 18-byte
form with ``cbSize`` 0; libsndfile and sox read exactly this.
"""

from __future__ import annotations

__all__ = [
    "FORMAT_MULAW",
    "FORMAT_PCM",
    "MAX_ULAW_DATA_BYTES",
    "ULAW_HEADER_BYTES",
    "WavError",
    "WavFormat",
    "interleave",
    "pcm16_header",
    "pcm16_wav",
    "read_wav_header",
    "ulaw_header",
]

import struct

from .records import frozen

FORMAT_PCM = 0x0001  #: WAVE_FORMAT_PCM
FORMAT_MULAW = 0x0007  #: WAVE_FORMAT_MULAW (G.711 μ-law)

# RIFF header (12) + fmt chunk with cbSize (8 + 18) + fact chunk (8 + 4) + data header (8)
ULAW_HEADER_BYTES = 12 + 26 + 12 + 8
#: The RIFF size field is 32 bits: the most data bytes a μ-law file holds (74 hours
#: of a two-channel 8 kHz recording).
MAX_ULAW_DATA_BYTES = 0xFFFFFFFF - (ULAW_HEADER_BYTES - 8)


class WavError(ValueError):
    """The bytes are not a WAV this module understands; the message says why."""


@frozen
class WavFormat:
    """What a WAV header says: ``data_offset`` and ``data_bytes`` locate the samples."""

    format_tag: int
    channels: int
    sample_rate: int
    bits_per_sample: int
    data_offset: int
    data_bytes: int

    @property
    def frames(self) -> int:
        """Sample frames (one sample of every channel) in the data."""
        return self.data_bytes // (self.channels * self.bits_per_sample // 8)


def pcm16_header(data_bytes: int, sample_rate: int, channels: int = 1) -> bytes:
    """The canonical 44-byte header of a 16-bit PCM WAV whose data is ``data_bytes``
    long (for a file served piece by piece)."""
    block = 2 * channels
    if data_bytes % block or not 0 <= data_bytes <= 0xFFFFFFFF - 36:
        raise ValueError(f"{data_bytes} bytes are not whole 16-bit frames of {channels} "
                         "channel(s) that fit a WAV file")
    fmt = struct.pack("<HHIIHH", FORMAT_PCM, channels, sample_rate, sample_rate * block, block, 16)
    return b"".join((
        b"RIFF", struct.pack("<I", 4 + 8 + len(fmt) + 8 + data_bytes), b"WAVE",
        b"fmt ", struct.pack("<I", len(fmt)), fmt,
        b"data", struct.pack("<I", data_bytes),
    ))


def pcm16_wav(pcm16: bytes, sample_rate: int, channels: int = 1) -> bytes:
    """A whole WAV file of little-endian 16-bit PCM (canonical 44-byte header)."""
    return pcm16_header(len(pcm16), sample_rate, channels) + pcm16


def ulaw_header(frames: int, *, channels: int = 2, sample_rate: int = 8000) -> bytes:
    """The ``ULAW_HEADER_BYTES`` that begin a μ-law WAV of ``frames`` sample frames.

    Rewrite it at offset 0 whenever more frames have been appended: the layout never
    changes, only the three sizes (RIFF, ``fact``, ``data``).
    """
    data_bytes = frames * channels
    if not 0 <= data_bytes <= MAX_ULAW_DATA_BYTES:
        raise ValueError(f"{frames} frames do not fit a WAV file")
    fmt = struct.pack(
        "<HHIIHHH", FORMAT_MULAW, channels, sample_rate, sample_rate * channels, channels, 8, 0
    )
    header = b"".join((
        b"RIFF", struct.pack("<I", ULAW_HEADER_BYTES - 8 + data_bytes), b"WAVE",
        b"fmt ", struct.pack("<I", len(fmt)), fmt,
        b"fact", struct.pack("<II", 4, frames),
        b"data", struct.pack("<I", data_bytes),
    ))
    assert len(header) == ULAW_HEADER_BYTES
    return header


def interleave(left: bytes, right: bytes) -> bytes:
    """Two channels of 8-bit samples as one stream of frames: left, right, left, ...

    The sides must be equally long: the caller aligns them in time.
    """
    if len(left) != len(right):
        raise ValueError(f"channels differ in length: {len(left)} and {len(right)} samples")
    frames = bytearray(2 * len(left))
    frames[0::2] = left
    frames[1::2] = right
    return bytes(frames)


def read_wav_header(data: bytes, file_size: int | None = None) -> WavFormat:
    """Find the format and the samples of a WAV held in ``data`` (at least its header;
    ``file_size``: the whole file's size when ``data`` is only its start).

    Unknown chunks (``LIST``, ``fact``) are skipped; a ``data`` size past the end of the
    file — one still being written, or cut short — is clipped to what is there.
    """
    end = len(data) if file_size is None else file_size
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise WavError("not a RIFF WAVE file")
    position, found = 12, None
    while position + 8 <= len(data):
        kind, size = data[position:position + 4], struct.unpack_from("<I", data, position + 4)[0]
        body = position + 8
        if kind == b"fmt ":
            if size < 16 or body + 16 > len(data):
                raise WavError("the fmt chunk is too short")
            tag, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", data, body)
            found = (tag, channels, rate, bits)
        elif kind == b"data":
            if found is None:
                raise WavError("the data chunk comes before the fmt chunk")
            tag, channels, rate, bits = found
            if channels < 1 or bits not in (8, 16):
                raise WavError(f"{channels} channel(s) of {bits}-bit samples are not supported")
            available = max(0, min(size, end - body))
            block = channels * bits // 8
            return WavFormat(tag, channels, rate, bits, body, available - available % block)
        position = body + size + (size & 1)  # chunks are padded to even length
    raise WavError("no data chunk")
