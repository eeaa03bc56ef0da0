"""Frame energy and a barge-in detector in pure Python: the reference twin of ``_energy_c``.

``rms`` is exactly sqrt(sum(x**2) / n) / 32768 from an integer sum, so 1.0 is
a full-scale square wave. (audioop.rms truncates to an int first, so it may read
up to one unit, 1/32768, lower.)
"""

from __future__ import annotations

__all__ = ("Detector", "rms", "zero_crossings")

import math

from kernels._energy_events import VoiceEvent

_SPEECH_START = VoiceEvent.SPEECH_START.value
_SPEECH_END = VoiceEvent.SPEECH_END.value
_BARGE_IN = VoiceEvent.BARGE_IN.value


def _samples(frame) -> memoryview:
    view = memoryview(frame).cast("B")
    if len(view) & 1:
        raise ValueError(f"16-bit PCM needs an even number of bytes, got {len(view)}")
    return view.cast("h")


def _rms(samples: memoryview) -> float:
    if not samples:
        return 0.0
    total = sum(sample * sample for sample in samples)
    # float(total) / n rounds exactly as C's (double)total / (double)n does
    return math.sqrt(float(total) / len(samples)) / 32768.0


def rms(frame) -> float:
    """Root mean square of 16-bit PCM (bytes-like), 0.0 to 1.0 of full scale; 0.0 if empty."""
    return _rms(_samples(frame))


def zero_crossings(frame) -> int:
    """How often 16-bit PCM (bytes-like) changes sign: pairs of neighbours, one below
    zero and one at or above it; 0 for fewer than two samples."""
    samples = _samples(frame)
    return sum((a < 0) != (b < 0) for a, b in zip(samples, samples[1:]))


def _duration_samples(milliseconds: int, sample_rate: int, name: str) -> int:
    if milliseconds < 0:
        raise ValueError(f"{name} must not be negative, got {milliseconds}")
    return milliseconds * sample_rate // 1000


class Detector:
    """Per-frame speech and barge-in detection from frame energy.

    Call :meth:`update` once per frame; it returns :class:`VoiceEvent` bits.
    Durations count samples, so frames of any length add up exactly.

    - speech starts when frames at or above ``speech_threshold`` run for
      ``min_speech_ms``; it ends when frames below it run for ``silence_threshold_ms``;
    - barge-in is reported once when frames at or above ``barge_threshold`` run
      for ``barge_min_ms``, and again only after a frame below it.
    """

    def __init__(
        self,
        sample_rate: int = 8000,
        *,
        speech_threshold: float = 0.012,
        min_speech_ms: int = 250,
        silence_threshold_ms: int = 900,
        barge_threshold: float = 0.035,
        barge_min_ms: int = 240,
    ) -> None:
        if sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, got {sample_rate}")
        self.sample_rate = sample_rate
        self.speech_threshold = float(speech_threshold)
        self.barge_threshold = float(barge_threshold)
        self._min_speech = _duration_samples(min_speech_ms, sample_rate, "min_speech_ms")
        self._silence = _duration_samples(silence_threshold_ms, sample_rate, "silence_threshold_ms")
        self._barge_min = _duration_samples(barge_min_ms, sample_rate, "barge_min_ms")
        self.reset()

    def reset(self) -> None:
        """Back to silence, as at the start of a call."""
        #: True between a speech start and the speech end that follows it.
        self.speaking = False
        #: RMS of the last frame (0.0 to 1.0).
        self.level = 0.0
        # Samples in a row on the other side of speech_threshold from ``speaking`` (loud
        # ones while silent, quiet ones while speaking): enough of them turn it over.
        self._against = 0
        self._barge_run = 0  # samples in a row at or above barge_threshold
        self._barge_reported = False

    def update(self, frame) -> int:
        """Take one frame (bytes-like 16-bit PCM); return the VoiceEvent bits it causes."""
        samples = _samples(frame)
        count = len(samples)
        if not count:
            return 0  # no time passed
        level = self.level = _rms(samples)
        return (self._barge(level >= self.barge_threshold, count)
                | self._speech(level >= self.speech_threshold, count))

    def _barge(self, loud: bool, count: int) -> int:
        """BARGE_IN once a loud run has lasted ``barge_min_ms``; a quiet frame ends the run."""
        if not loud:
            self._barge_run, self._barge_reported = 0, False
            return 0
        self._barge_run += count
        if self._barge_reported or self._barge_run < self._barge_min:
            return 0
        self._barge_reported = True
        return _BARGE_IN

    def _speech(self, loud: bool, count: int) -> int:
        """SPEECH_START or SPEECH_END when frames against ``speaking`` have run long enough
        (``min_speech_ms`` of loud ones to start, ``silence_threshold_ms`` of quiet ones
        to end); a frame that agrees with it starts the count again."""
        if loud == self.speaking:
            self._against = 0
            return 0
        self._against += count
        if self._against < (self._silence if self.speaking else self._min_speech):
            return 0
        self.speaking, self._against = loud, 0
        return _SPEECH_START if loud else _SPEECH_END
