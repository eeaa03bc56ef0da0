"""G.711 μ-law companding in pure Python: the reference twin of ``_ulaw_c``.

PCM is signed 16-bit in native byte order (little-endian on every platform the
service runs on), as audioop and the telephone transports use it. Codes are the
bytes that travel on the wire.

The encoder follows CPython's audioop (``st_14linear2ulaw``) bit for bit, not
the ITU-T G.191 reference (``ulaw_compress``). They disagree on 508 negative
inputs: the four samples just below each of the 127 negative decision levels,
from -1 down to -31612. audioop takes the magnitude of a negative sample as
``-(x >> 2)`` (rounded up) where G.191 takes ``~x >> 2`` (rounded down), so
there audioop returns the code one step louder. We follow audioop because it is
what the Python telephony ecosystem (and this service, before these kernels)
produced: swapping one for the other must not change a byte of a call or a
recording. The difference is at most one quantisation step exactly at a
decision level, far below what the listener can hear, and decoding is identical.
"""

from __future__ import annotations

__all__ = ("lin2ulaw", "lin2ulaw_into", "ulaw2lin", "ulaw2lin_into")

_BIAS = 0x84  # G.711 adds 33 (0x84 >> 2) to the 14-bit magnitude before the log step.
_CLIP = 8159  # largest 14-bit magnitude that still fits the top segment once biased
_SEGMENT_ENDS = (0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF)


def _encode_sample(sample: int) -> int:
    """The μ-law code of one 16-bit sample, as audioop computes it."""
    magnitude = sample >> 2  # 16-bit sample to 14-bit, rounding towards -inf
    if magnitude < 0:
        magnitude, mask = -magnitude, 0x7F
    else:
        mask = 0xFF
    magnitude = min(magnitude, _CLIP) + (_BIAS >> 2)
    segment = 0
    while segment < 8 and magnitude > _SEGMENT_ENDS[segment]:
        segment += 1
    if segment == 8:
        return 0x7F ^ mask
    return ((segment << 4) | ((magnitude >> (segment + 1)) & 0xF)) ^ mask


def _decode_code(code: int) -> int:
    """The 16-bit sample a μ-law code stands for (G.711 table 2)."""
    code = ~code & 0xFF
    exponent = (code >> 4) & 0x07
    magnitude = ((((code & 0x0F) << 3) + _BIAS) << exponent) - _BIAS
    return -magnitude if code & 0x80 else magnitude


#: Code for every 16-bit sample, indexed by the sample's unsigned 16-bit value.
_ENCODE = bytes(_encode_sample(u - 0x10000 if u & 0x8000 else u) for u in range(0x10000))
#: Sample for every code.
_DECODE = tuple(_decode_code(code) for code in range(256))


def _samples(pcm) -> memoryview:
    view = memoryview(pcm).cast("B")
    if len(view) & 1:
        raise ValueError(f"16-bit PCM needs an even number of bytes, got {len(view)}")
    return view.cast("h")


def _writable_bytes(out, needed: int) -> memoryview:
    view = memoryview(out).cast("B")
    if view.readonly:
        raise TypeError("the output buffer must be writable")
    if len(view) < needed:
        raise ValueError(f"the output buffer holds {len(view)} bytes, {needed} are needed")
    return view


def lin2ulaw(pcm) -> bytes:
    """Encode 16-bit PCM (any bytes-like object) to μ-law, one byte per sample."""
    out = bytearray(len(_samples(pcm)))
    lin2ulaw_into(pcm, out)
    return bytes(out)


def ulaw2lin(codes) -> bytes:
    """Decode μ-law bytes (any bytes-like object) to 16-bit PCM."""
    out = bytearray(2 * memoryview(codes).nbytes)
    ulaw2lin_into(codes, out)
    return bytes(out)


def lin2ulaw_into(pcm, out) -> int:
    """Encode ``pcm`` into the start of the writable buffer ``out``; return the bytes written.

    With a preallocated ``out`` (a bytearray, say) a call allocates nothing per frame.
    """
    samples = _samples(pcm)
    view = _writable_bytes(out, len(samples))
    for index, sample in enumerate(samples):
        view[index] = _ENCODE[sample & 0xFFFF]
    return len(samples)


def ulaw2lin_into(codes, out) -> int:
    """Decode ``codes`` into the start of the writable buffer ``out``; return the bytes written."""
    source = memoryview(codes).cast("B")
    samples = _writable_bytes(out, 2 * len(source))[: 2 * len(source)].cast("h")
    for index, code in enumerate(source):
        samples[index] = _DECODE[code]
    return 2 * len(source)
