"""Streaming polyphase resampler in pure Python: the reference twin of ``_resample_c``.

Output sample k falls at input time k * down / up. It is a dot product of one
polyphase branch (``k * down % up``) with the ``taps_per_phase`` input samples
ending at sample ``k * down // up``. The filter is causal, so output k needs no
input beyond that sample: after N input samples ceil(N * up / down) outputs
exist, whatever the chunking, and a 20 ms frame yields exactly its 20 ms share
(a fraction left over carries to the next frame). The price is the filter's
group delay (``delay`` seconds, under 2 ms), which the output lags the input by.

Arithmetic is integer: Q15 taps, an exact sum, rounding half up, saturation to
int16. The compiled twin computes the same sums, so both give identical bytes.
"""

from __future__ import annotations

__all__ = ("Resampler", "resample")

from array import array

from kernels._resample_spec import filter_taps, output_length


def _samples(frame) -> memoryview:
    view = memoryview(frame).cast("B")
    if len(view) & 1:
        raise ValueError(f"16-bit PCM needs an even number of bytes, got {len(view)}")
    return view.cast("h")


class Resampler:
    """Converts a stream of 16-bit PCM frames from ``from_rate`` to ``to_rate``.

    Feed every frame to :meth:`process` (or :meth:`process_into`) as it arrives;
    call :meth:`reset` when the stream restarts (barge-in, a new utterance).
    """

    def __init__(self, from_rate: int, to_rate: int) -> None:
        taps = filter_taps(from_rate, to_rate)
        self.from_rate = from_rate
        self.to_rate = to_rate
        #: Seconds the output lags the input (the filter's group delay).
        self.delay = taps.delay_seconds
        self._up, self._down, self._phases = taps.up, taps.down, taps.phases
        self._taps = taps.taps_per_phase
        self.reset()

    def reset(self) -> None:
        """Forget all past input, as if the stream began again with silence."""
        self._history = [0] * (self._taps - 1)  # the last taps - 1 input samples
        self._position = 0  # next output's time, in 1/up samples from the next input

    def output_length(self, samples: int) -> int:
        """How many samples :meth:`process` returns for ``samples`` more input samples."""
        return output_length(samples, self._position, self._up, self._down)

    def process(self, frame) -> bytes:
        """Resample one frame (bytes-like 16-bit PCM); return the output it completes."""
        out = bytearray(2 * self.output_length(len(_samples(frame))))
        self.process_into(frame, out)
        return bytes(out)

    def process_into(self, frame, out) -> int:
        """Like :meth:`process`, writing into the writable buffer ``out``; return bytes written."""
        samples = _samples(frame)
        needed = 2 * self.output_length(len(samples))
        target = memoryview(out).cast("B")
        if target.readonly:
            raise TypeError("the output buffer must be writable")
        if len(target) < needed:
            raise ValueError(f"the output buffer holds {len(target)} bytes, {needed} are needed")
        window = self._history + samples.tolist()
        up, down, taps, phases = self._up, self._down, self._taps, self._phases
        produced = array("h")
        position = self._position
        while position < len(samples) * up:
            start, phase = divmod(position, up)  # window[start:start + taps] ends at input `start`
            total = sum(h * x for h, x in zip(phases[phase], window[start : start + taps]))
            produced.append(max(-32768, min(32767, (total + (1 << 14)) >> 15)))
            position += down
        self._position = position - len(samples) * up
        self._history = window[len(window) - (taps - 1) :]
        target[:needed] = produced.tobytes()
        return needed


def resample(data, from_rate: int, to_rate: int) -> bytes:
    """Resample a whole buffer at once: what a fresh :class:`Resampler` makes of it."""
    return Resampler(from_rate, to_rate).process(data)
