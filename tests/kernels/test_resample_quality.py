"""Resampler quality against an analytic sine: flat passband, aliases and images far down.

The figures are the telephone band's (spec in ``kernels/_resample_design.py``):
±0.05 dB from 100 Hz to 3.4 kHz; whatever the conversion folds into 100 Hz to
3.4 kHz of the output, from anywhere in the input, and every image of a tone in
that band, wherever it lands, at least 70 dB down; at most
2.5 ms of constant (linear-phase) delay. Tones last 0.12 s and are measured over
a 0.1 s window with a whole number of cycles, so other tones do not leak in.
"""

import cmath
import math

import numpy as np
import pytest

PASSBAND_HZ = (100, 3400)
CONVERSIONS = [(8000, 16000), (16000, 8000), (24000, 16000), (24000, 8000), (22050, 16000)]
AMPLITUDE = 16384  # half scale: no saturation, rounding noise far below -70 dB
WINDOW = (0.01, 0.11)  # seconds of output measured: after the filter fills, whole cycles


def sine(frequency: float, rate: int) -> np.ndarray:
    n = np.arange(round(0.12 * rate))
    return np.round(AMPLITUDE * np.sin(2 * np.pi * frequency * n / rate)).astype(np.int16)


def phasor(samples: np.ndarray, frequency: float, rate: int) -> complex:
    """Complex amplitude of ``frequency`` over the measuring window of ``samples``."""
    start, stop = round(WINDOW[0] * rate), round(WINDOW[1] * rate)
    n = np.arange(start, stop)
    basis = np.exp(-2j * np.pi * frequency * n / rate)
    return complex(2 * np.dot(samples[start:stop].astype(np.float64), basis) / (stop - start))


def convert(resample, samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    return np.frombuffer(resample.resample(samples.tobytes(), from_rate, to_rate), np.int16)


def fold(frequency: float, rate: int) -> float:
    """Where ``frequency`` appears once sampled at ``rate``."""
    return abs((frequency + rate / 2) % rate - rate / 2)


def in_passband(frequency: float) -> bool:
    return PASSBAND_HZ[0] <= frequency <= PASSBAND_HZ[1]


def strays(frequency: float, from_rate: int, to_rate: int) -> set[float]:
    """Output frequencies where a tone may leave an alias or image that must be 70 dB down.

    Those are any that land in the passband, and every image of a passband tone.
    """
    wanted = frequency if frequency < to_rate / 2 else None
    images = {k * from_rate + sign * frequency for k in range(-4, 5) for sign in (1, -1)}
    landed = {fold(image, to_rate) for image in images} - {wanted}
    return {f for f in landed if in_passband(f) or in_passband(frequency)}


@pytest.mark.parametrize("from_rate, to_rate", CONVERSIONS)
def test_passband_is_flat_and_delay_constant(resample, from_rate, to_rate):
    delay = resample.Resampler(from_rate, to_rate).delay
    assert 0 < delay <= 0.0025
    for frequency in range(PASSBAND_HZ[0], PASSBAND_HZ[1] + 1, 100):
        tone = sine(frequency, from_rate)
        before = phasor(tone, frequency, from_rate)
        after = phasor(convert(resample, tone, from_rate, to_rate), frequency, to_rate)
        gain_db = 20 * math.log10(abs(after) / abs(before))
        assert abs(gain_db) <= 0.05, f"{frequency} Hz: {gain_db:+.4f} dB"
        # linear phase: every frequency is late by the same `delay`
        lag = cmath.phase(after / before * cmath.exp(2j * math.pi * frequency * delay))
        assert abs(lag) < 1e-3, f"{frequency} Hz: phase off by {lag:.5f} rad"


@pytest.mark.parametrize("from_rate, to_rate", CONVERSIONS)
def test_aliases_and_images_in_the_passband_are_70_db_down(resample, from_rate, to_rate):
    worst = -math.inf
    for frequency in range(50, from_rate // 2, 100):
        landing = strays(frequency, from_rate, to_rate)
        if not landing:
            continue
        tone = sine(frequency, from_rate)
        output = convert(resample, tone, from_rate, to_rate)
        reference = abs(phasor(tone, frequency, from_rate))
        for stray in landing:
            level = 20 * math.log10(max(abs(phasor(output, stray, to_rate)), 1e-9) / reference)
            assert level <= -70, f"{frequency} Hz leaves {level:.1f} dB at {stray} Hz"
            worst = max(worst, level)
    assert worst > -math.inf  # the sweep did reach frequencies that fold into the band
