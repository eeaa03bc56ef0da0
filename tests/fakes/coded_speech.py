"""Instant speech engines that a test can read back: text spoken as tones, one a letter.

``CodedSynthesiser`` speaks each character as a 50 ms sine tone whose pitch names
the character; ``CodedRecogniser`` hears the pitches and gives the text back. Both
follow the ``adapters.speech`` protocols and answer at once, so a call's timings are
the service's own, and what a simulated caller heard can be compared word for word
with what the agent said — through μ-law, resampling and the network, as a call
carries it.

Pitches: a 50 ms window at 8 or 16 kHz has bins 20 Hz apart, and every tone sits
exactly on a bin. Characters alternate between a low band (300–1560 Hz) and a high
band (1700–2960 Hz), so a doubled letter is two tones, not one long one. Reading
slides the window 10 ms at a time; a window that is not mostly one pitch reads as
nothing, and a pitch counts once heard in three windows (``_spell``).
"""

from __future__ import annotations

__all__ = ["ALPHABET", "CodedRecogniser", "CodedSynthesiser", "decode", "encode", "normalise"]

import math
import struct

import numpy as np

from adapters.speech import SpeechUnavailable

ALPHABET = " abcdefghijklmnopqrstuvwxyz0123456789.,?!'-:;+()/&@%$\"#*=_"
_UNKNOWN = "_"
SYMBOL_MS = 50
_STEP_MS = 10
_SPACING_HZ = 20
_BANDS_HZ = (300, 1700)
_LEVEL = 0.25
_SILENCE_RMS = 0.02
_PEAK_SHARE = 0.4


def normalise(text: str) -> str:
    """What survives the code: lower case, known characters, single spaces."""
    kept = "".join(c if c in ALPHABET else _UNKNOWN for c in text.lower())
    return " ".join(kept.split())


def _pitch(index: int, char: str) -> int:
    return _BANDS_HZ[index % 2] + _SPACING_HZ * ALPHABET.index(char)


def encode(text: str, sample_rate: int) -> bytes:
    """``text`` as tones, PCM16 little-endian mono at ``sample_rate``."""
    per_symbol = sample_rate * SYMBOL_MS // 1000
    samples: list[int] = []
    for index, char in enumerate(normalise(text)):
        step = 2 * math.pi * _pitch(index, char) / sample_rate
        samples.extend(int(_LEVEL * 32767 * math.sin(step * n)) for n in range(per_symbol))
    return struct.pack(f"<{len(samples)}h", *samples)


def decode(pcm: bytes, sample_rate: int) -> str:
    """The text spoken in ``pcm`` (PCM16 at 8000, 16000 or 24000 Hz)."""
    signal = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.float64) / 32768
    window = sample_rate * SYMBOL_MS // 1000
    step = sample_rate * _STEP_MS // 1000
    # Quiet on both sides, so a tone cut by the edge is still seen by enough windows.
    signal = np.concatenate([np.zeros(window), signal, np.zeros(window)])
    readings: list[str | None] = []
    for start in range(0, max(len(signal) - window + 1, 0), step):
        chunk = signal[start:start + window]
        if math.sqrt(float(np.mean(chunk * chunk))) < _SILENCE_RMS:
            readings.append(None)
            continue
        power = np.abs(np.fft.rfft(chunk)) ** 2
        peak = int(np.argmax(power))
        # A window mostly filled by one tone has most of its energy in one bin; one
        # that straddles two tones, or holds a sliver of one, reads as nothing.
        if power[peak] < _PEAK_SHARE * float(np.sum(power)):
            readings.append(None)
            continue
        readings.append(_symbol(peak * sample_rate / window))
    return _spell(readings)


def _spell(readings: list[str | None]) -> str:
    """Readings (one per window step) to text. A pitch counts once heard in three
    windows, even with a short gap in the line's audio inside it; the bands alternate,
    so the same pitch again is the same tone; 100 ms of quiet after a sentence's full
    stop is the space between two sentences spoken one by one."""
    text: list[str] = []
    current, heard, quiet = None, 0, 0
    emitted = None

    def settle() -> None:
        nonlocal emitted
        if current is not None and heard >= 3 and current != emitted:
            text.append(current[1:])
            emitted = current

    for reading in readings + [None] * 10:
        if reading is None:
            quiet += 1
            if quiet * _STEP_MS >= 100 and current is not None:
                settle()
                current, heard = None, 0
                if text and text[-1] in ".!?":
                    text.append(" ")
            continue
        quiet = 0
        if reading == current:
            heard += 1
            continue
        settle()
        current, heard = reading, 1
    return " ".join("".join(text).split())


def _symbol(peak_hz: float) -> str | None:
    """The band and character a pitch names (band first, so a doubled letter in the
    other band counts as a new symbol)."""
    for band, low in enumerate(_BANDS_HZ):
        position = round((peak_hz - low) / _SPACING_HZ)
        if 0 <= position < len(ALPHABET) and abs(peak_hz - low - position * _SPACING_HZ) < 15:
            return f"{band}{ALPHABET[position]}"
    return None


class CodedSynthesiser:
    """Speaks text as tones at once. ``available`` false makes every request fail, as
    an unreachable engine would."""

    def __init__(self, sample_rate: int = 8000) -> None:
        self.sample_rate = sample_rate
        self.available = True
        self.spoken: list[str] = []

    async def stream(self, text: str):
        if not self.available:
            raise SpeechUnavailable("the coded synthesiser is switched off", engine="coded")
        self.spoken.append(text)
        pcm = encode(text, self.sample_rate)
        # Two chunks, the first one odd in samples, as a streaming engine delivers.
        cut = (len(pcm) // 3) & ~1
        if cut:
            yield pcm[:cut]
        yield pcm[cut:]


class CodedRecogniser:
    """Reads tones back as text at once, and keeps what it heard."""

    def __init__(self) -> None:
        self.heard: list[str] = []

    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        text = decode(pcm16, sample_rate)
        self.heard.append(text)
        return text
