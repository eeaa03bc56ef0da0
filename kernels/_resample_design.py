"""Design the resampler's FIR filters and write them to ``_resample_taps.py``.

Run offline, by hand, when the filter specification changes::

    .venv/bin/python -m kernels._resample_design

It needs numpy, which is a test and benchmark dependency only: nothing imports
this module at run time. ``tests/kernels/test_resample_design.py`` checks that
the stored taps meet the specification below (the design's floating point may
differ by a last bit between BLAS builds, so the taps, not the run, are the
contract).

The specification (the telephone band, for every conversion):

- passband 0-3400 Hz, flat to within ``PASSBAND_RIPPLE_DB``;
- stopband from 600 Hz above the lower rate's Nyquist frequency (4600 Hz when
  one side is 8 kHz, 8600 Hz for 24 or 22.05 kHz to 16 kHz), at least
  ``STOPBAND_ATTENUATION_DB`` down, so every alias or image that lands in the
  telephone band of the output is at least that far down;
- linear phase (a symmetric, odd-length prototype), at most 2.5 ms of delay (5 ms
  for the higher AudioSocket rates, ``max_delay``).

The prototype runs at ``up * from_rate`` and is split into ``up`` polyphase
branches. It is designed by weighted least squares with Lawson's reweighting
(which converges on the equiripple, minimax filter), then quantised to Q15;
the shortest length whose *quantised* response meets the specification wins.

The margins over the figures the tests assert (±0.05 dB, 70 dB) absorb the
int16 rounding of the output.

eSpeak NG's 22050 Hz needs ``up`` = 320 to reach 16 kHz: a prototype of several
thousand taps, far beyond what the least-squares solve handles in reasonable
time and memory. Conversions with that many branches use a Kaiser-windowed sinc
instead (closed form, a few milliseconds), lengthened by whole branches until
the quantised response meets the same specification. Its passband ripple is
far inside the limit; it costs a few more taps than the minimax filter would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

#: Rates of Asterisk AudioSocket's higher-rate audio kinds (slin12 … slin192), each
#: converted to and from the telephone line's 8 kHz (16 and 24 kHz are below).
AUDIOSOCKET_RATES = (12000, 32000, 44100, 48000, 96000, 192000)

#: Rates above 44.1 kHz come down to 8 kHz by halves (then 24 -> 8 kHz): one Q15 filter
#: from 48 kHz or more straight to 8 kHz would need so many taps that their rounding
#: alone would fill the stopband.
HALVINGS = ((48000, 24000), (96000, 48000), (192000, 96000))

#: (from_rate, to_rate) pairs the resampler supports.
CONVERSIONS = ((8000, 16000), (16000, 8000), (24000, 16000), (24000, 8000), (22050, 16000),
               (8000, 24000), (12000, 8000), (32000, 8000), (44100, 8000), *HALVINGS,
               *((8000, rate) for rate in AUDIOSOCKET_RATES))

PASSBAND_EDGE_HZ = 3400
STOPBAND_MARGIN_HZ = 600  # beyond the lower rate's Nyquist frequency
PASSBAND_RIPPLE_DB = 0.02
STOPBAND_ATTENUATION_DB = 73.0
MAX_DELAY_SECONDS = 0.0025
#: The higher-rate AudioSocket conversions: a narrow transition at a high rate needs
#: a longer filter, and 5 ms is still far below a 20 ms frame.
MAX_HIGH_RATE_DELAY_SECONDS = 0.005
#: Above this many branches the prototype is too long for least squares: Kaiser.
MAX_LEAST_SQUARES_BRANCHES = 8
#: The same above this many taps (a high input rate against a narrow transition).
MAX_LEAST_SQUARES_TAPS = 160
Q15 = 1 << 15

TAPS_MODULE = Path(__file__).with_name("_resample_taps.py")


@dataclass(frozen=True)
class Design:
    from_rate: int
    to_rate: int
    up: int
    down: int
    length: int  # prototype taps (odd)
    taps_per_phase: int  # branch length, padded to a multiple of 8 for the SIMD loop
    phases: tuple[tuple[int, ...], ...]  # Q15, oldest input sample first
    ripple_db: float
    attenuation_db: float

    @property
    def delay_seconds(self) -> float:
        return (self.length - 1) / 2 / (self.up * self.from_rate)


def _ripple(decibels: float) -> float:
    """Amplitude error allowed by a figure in dB (ripple above 0, attenuation below)."""
    return 10 ** (decibels / 20) - 1 if decibels > 0 else 10 ** (decibels / 20)


def _least_squares_lowpass(np, length: int, pass_edge: float, stop_edge: float):
    """A symmetric lowpass of ``length`` taps; edges in cycles per sample (0..0.5)."""
    half = (length - 1) // 2
    grid_size = 24 * (half + 1)
    passband = np.linspace(0.0, pass_edge, grid_size // 3)
    stopband = np.linspace(stop_edge, 0.5, grid_size - grid_size // 3)
    frequencies = np.concatenate([passband, stopband])
    desired = np.concatenate([np.ones_like(passband), np.zeros_like(stopband)])
    # amplitude = c0 + 2 * sum(c_k cos(2 pi f k)): one column per distinct tap
    basis = np.cos(2 * np.pi * np.outer(frequencies, np.arange(half + 1)))
    basis[:, 1:] *= 2
    # the specification allows this much more error in the passband than in the stopband
    emphasis = np.where(desired > 0, 1.0, _ripple(PASSBAND_RIPPLE_DB) / _ripple(-STOPBAND_ATTENUATION_DB))
    weights = np.ones_like(frequencies)
    for _ in range(60):  # Lawson: weight where the (emphasised) error is largest
        root = np.sqrt(weights * emphasis**2)
        coefficients = np.linalg.lstsq(basis * root[:, None], desired * root, rcond=None)[0]
        weights = weights * emphasis * np.abs(basis @ coefficients - desired)
        weights /= weights.sum()
    return np.concatenate([coefficients[:0:-1], coefficients])


def _kaiser_lowpass(np, length: int, pass_edge: float, stop_edge: float, attenuation_db: float):
    """A symmetric windowed-sinc lowpass of ``length`` taps cut between the edges,
    its Kaiser window shaped for ``attenuation_db`` (Kaiser's formula for beta)."""
    centred = np.arange(length) - (length - 1) / 2
    cutoff = (pass_edge + stop_edge) / 2
    window = np.kaiser(length, 0.1102 * (attenuation_db - 8.7))
    taps = 2 * cutoff * np.sinc(2 * cutoff * centred) * window
    return taps / taps.sum()


def _response(np, quantised, up: int, pass_edge: float, stop_edge: float):
    """Passband ripple (±dB) and worst stopband gain (amplitude) of Q15 prototype taps."""
    spectrum = np.abs(np.fft.rfft(quantised / (up * Q15), 1 << 16))
    frequencies = np.fft.rfftfreq(1 << 16)
    ripple = np.max(np.abs(20 * np.log10(spectrum[frequencies <= pass_edge])))
    return float(ripple), float(np.max(spectrum[frequencies >= stop_edge]))


def _quantise(np, prototype, up: int, pass_edge: float, stop_edge: float):
    """Q15 taps of ``up`` times the prototype, rounding refined against the stopband.

    Plain rounding leaves the stopband near 72-78 dB whatever the length; nudging
    symmetric pairs of taps by one step, greedily, wins back several dB.
    """
    # 1.0 does not fit int16; 32767/32768 costs 0.0003 dB. Keeping -32768 out too
    # means no pair of products can overflow the int32 that SIMD sums them in.
    quantised = np.clip(np.round(prototype * up * Q15), 1 - Q15, Q15 - 1)
    ripple, worst = _response(np, quantised, up, pass_edge, stop_edge)
    improved = True
    while improved:
        improved = False
        for index in range(len(quantised) // 2 + 1):
            for step in (1, -1):
                trial = quantised.copy()
                trial[index] += step
                trial[len(trial) - 1 - index] = trial[index]
                if abs(trial[index]) > Q15 - 1:
                    continue
                trial_ripple, trial_worst = _response(np, trial, up, pass_edge, stop_edge)
                if trial_worst < worst and trial_ripple <= PASSBAND_RIPPLE_DB:
                    quantised, worst, ripple, improved = trial, trial_worst, trial_ripple, True
    return quantised.astype(np.int64), ripple, -20 * float(np.log10(worst))


def _phases(quantised, up: int, taps_per_phase: int) -> tuple[tuple[int, ...], ...]:
    """Polyphase branches, zero-padded, oldest input sample first.

    Branch ``p`` multiplies x[n - t] by tap ``p + t * up`` of the prototype.
    """
    padded = list(quantised) + [0] * (up * taps_per_phase - len(quantised))
    return tuple(
        tuple(int(padded[phase + t * up]) for t in reversed(range(taps_per_phase)))
        for phase in range(up)
    )


def _check_no_overflow(phases) -> None:
    """The SIMD dot products must never overflow their int32 lanes, for any input.

    A branch's taps can add up to more than 2.0 (an interpolating branch does),
    so a whole dot product may not fit int32. The kernels therefore keep four
    int32 lanes (pmaddwd's: lane j sums taps i with i % 8 in {2j, 2j + 1}) and
    add the lanes in 64 bits. Each lane's share must fit, with the rounding term.
    """
    for phase in phases:
        for lane in range(4):
            share = sum(abs(tap) for index, tap in enumerate(phase) if index % 8 // 2 == lane)
            assert share * Q15 + Q15 < 1 << 31, "a SIMD lane could overflow"


def design(np, from_rate: int, to_rate: int) -> Design:
    """The shortest filter for one conversion whose quantised response meets the spec."""
    common = math.gcd(from_rate, to_rate)
    up, down = to_rate // common, from_rate // common
    rate = up * from_rate
    pass_edge = PASSBAND_EDGE_HZ / rate
    stop_edge = (min(from_rate, to_rate) / 2 + STOPBAND_MARGIN_HZ) / rate
    if up > MAX_LEAST_SQUARES_BRANCHES or _kaiser_length(pass_edge, stop_edge) > MAX_LEAST_SQUARES_TAPS:
        candidates = _kaiser_candidates(np, up, pass_edge, stop_edge)
    else:
        candidates = _least_squares_candidates(np, up, pass_edge, stop_edge)
    for length, quantised, ripple, attenuation in candidates:
        if (length - 1) / 2 / rate > max_delay(from_rate, to_rate):
            break
        if ripple <= PASSBAND_RIPPLE_DB and attenuation >= STOPBAND_ATTENUATION_DB:
            taps_per_phase = -(-length // up)
            taps_per_phase += -taps_per_phase % 8  # whole SIMD steps
            phases = _phases(quantised, up, taps_per_phase)
            _check_no_overflow(phases)
            return Design(
                from_rate, to_rate, up, down, length, taps_per_phase, phases, ripple, attenuation
            )
    raise ValueError(f"no filter for {from_rate} -> {to_rate} Hz fits in "
                     f"{max_delay(from_rate, to_rate)} s")


def max_delay(from_rate: int, to_rate: int) -> float:
    """The longest group delay a conversion's filter may have."""
    if max(from_rate, to_rate) in AUDIOSOCKET_RATES:
        return MAX_HIGH_RATE_DELAY_SECONDS
    return MAX_DELAY_SECONDS


def _least_squares_candidates(np, up: int, pass_edge: float, stop_edge: float):
    """Minimax filters of 9, 11, 13... taps, quantised and measured."""
    length = 9
    while True:
        prototype = _least_squares_lowpass(np, length, pass_edge, stop_edge)
        yield (length, *_quantise(np, prototype, up, pass_edge, stop_edge))
        length += 2


def _kaiser_candidates(np, up: int, pass_edge: float, stop_edge: float):
    """Kaiser filters from the length Kaiser's formula gives, one branch longer each
    time. Plain rounding only: the greedy refinement would take hours at this length."""
    target = STOPBAND_ATTENUATION_DB + 3  # the margin rounding to Q15 eats
    length = _kaiser_length(pass_edge, stop_edge)
    while True:
        prototype = _kaiser_lowpass(np, length, pass_edge, stop_edge, target)
        quantised = np.clip(np.round(prototype * up * Q15), 1 - Q15, Q15 - 1)
        ripple, worst = _response(np, quantised, up, pass_edge, stop_edge)
        yield length, quantised.astype(np.int64), ripple, -20 * float(np.log10(worst))
        length += up + up % 2  # at least a whole branch longer, and still odd


def _kaiser_length(pass_edge: float, stop_edge: float) -> int:
    """Kaiser's estimate of the taps a lowpass needs (odd), with the rounding margin."""
    target = STOPBAND_ATTENUATION_DB + 3
    return math.ceil((target - 8) / (2.285 * 2 * math.pi * (stop_edge - pass_edge))) | 1


def render(designs: list[Design]) -> str:
    """The source of ``_resample_taps.py`` for ``designs``."""
    lines = [
        '"""Resampler filters, generated by ``python -m kernels._resample_design``: do not edit.',
        "",
        "Each entry: the polyphase branches of one linear-phase lowpass in Q15, oldest",
        "input sample first (branch ``p`` produces the outputs whose phase is ``p``).",
        '"""',
        "",
        "FILTERS = {",
    ]
    for d in designs:
        lines += [
            f"    # {d.length} taps at {d.up * d.from_rate} Hz: passband ±{d.ripple_db:.4f} dB,"
            f" stopband {d.attenuation_db:.1f} dB, delay {d.delay_seconds * 1000:.3f} ms",
            f"    ({d.from_rate}, {d.to_rate}): dict(",
            f"        up={d.up},",
            f"        down={d.down},",
            f"        delay_seconds={d.delay_seconds!r},",
            "        phases=(",
            *(f"            {phase!r}," for phase in d.phases),
            "        ),",
            "    ),",
        ]
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> None:
    import numpy as np

    designs = [design(np, *conversion) for conversion in CONVERSIONS]
    TAPS_MODULE.write_text(render(designs), encoding="utf-8")
    for d in designs:
        print(
            f"{d.from_rate:>5} -> {d.to_rate:>5} Hz: {d.length} taps ({d.taps_per_phase}/branch),"
            f" ±{d.ripple_db:.4f} dB, {d.attenuation_db:.1f} dB, {d.delay_seconds * 1000:.3f} ms"
        )


if __name__ == "__main__":
    main()
