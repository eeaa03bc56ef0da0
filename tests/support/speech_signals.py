"""Small speech-like and noise signals at a chosen level, made in the test.

``speechlike`` is a voice as a line carries it, for detector tests without a
synthesiser: a harmonic source on a wandering pitch, cut into syllables of 120–260 ms
with gaps between them, at an active speech level (dBFS over its voiced samples).
``noise`` is white or mains hum at an RMS level. Both are 16-bit PCM bytes; seeded.
``Voice`` is a test caller (``tests.fakes.voice.Caller``) that speaks so.
"""

from __future__ import annotations

__all__ = ["Voice", "noise", "speechlike"]

import numpy as np

from tests.fakes.voice import Caller


def _pcm(signal: np.ndarray) -> bytes:
    return np.clip(np.round(signal), -32768, 32767).astype("<i2").tobytes()


def _scaled(signal: np.ndarray, dbfs: float, active: np.ndarray | None = None) -> np.ndarray:
    part = signal[active] if active is not None else signal
    return signal * (10 ** (dbfs / 20) * 32768 / np.sqrt(np.mean(part**2)))


def speechlike(seconds: float, dbfs: float, rate: int = 8000, seed: int = 0) -> bytes:
    """``seconds`` of syllables at an active level of ``dbfs``; begins on its first one."""
    rng = np.random.default_rng(seed)
    count = int(seconds * rate)
    t = np.arange(count) / rate
    pitch = 120 + 25 * np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 6))
    phase = 2 * np.pi * np.cumsum(pitch) / rate
    source = sum(np.sin(k * phase) / k for k in range(1, 26))
    envelope = np.zeros(count)
    at = 0
    while at < count:
        length = int(rng.uniform(0.12, 0.26) * rate)
        end = min(count, at + length)
        envelope[at:end] = np.sin(np.pi * np.arange(end - at) / length) ** 0.5
        at = end + int(rng.uniform(0.03, 0.08) * rate)
    voice = source * envelope + rng.standard_normal(count) * envelope * 0.05
    return _pcm(_scaled(voice, dbfs, envelope > 0.3))


def noise(kind: str, seconds: float, dbfs: float, rate: int = 8000, seed: int = 1) -> bytes:
    """``seconds`` of ``white`` noise or 50 Hz ``hum`` (with odd harmonics) at ``dbfs`` RMS."""
    count = int(seconds * rate)
    if kind == "white":
        signal = np.random.default_rng(seed).standard_normal(count)
    elif kind == "hum":
        t = np.arange(count) / rate
        signal = sum(np.sin(2 * np.pi * 50 * k * t) / k for k in (1, 3, 5))
    else:
        raise ValueError(f"no noise called {kind!r}")
    return _pcm(_scaled(signal, dbfs))


class Voice(Caller):
    """A caller whose speech is a voice at a telephone level, not a loud tone."""

    def __init__(self, send, dbfs: float) -> None:
        super().__init__(send)
        self._speech = speechlike(4.0, dbfs, seed=7)
        self._at = 0

    @property
    def LOUD(self) -> bytes:  # noqa: N802 (read by Caller.run as its constant)
        frame = self._speech[self._at:self._at + 320]
        self._at = (self._at + 320) % (len(self._speech) - 320)
        return frame

    async def say(self, seconds: float) -> None:
        self._at = 0  # each utterance from its first syllable
        await super().say(seconds)
