"""The stored filter bank meets its specification (see ``kernels/_resample_design.py``)."""

import numpy as np
import pytest

from kernels import _resample_design as design
from kernels._resample_spec import filter_taps

CONVERSIONS = design.CONVERSIONS


def prototype(taps, from_rate: int) -> np.ndarray:
    """The Q15 prototype the branches were cut from, without the padding."""
    interleaved = np.array([phase[::-1] for phase in taps.phases]).T.reshape(-1)
    length = round(2 * taps.delay_seconds * taps.up * from_rate) + 1
    assert not interleaved[length:].any()
    return interleaved[:length]


@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_prototype_is_symmetric_so_phase_is_linear(conversion):
    taps = filter_taps(*conversion)
    coefficients = prototype(taps, conversion[0])
    assert (coefficients == coefficients[::-1]).all()
    assert taps.delay_seconds <= design.max_delay(*conversion)


@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_quantised_response_meets_the_design_margins(conversion):
    taps = filter_taps(*conversion)
    from_rate, to_rate = conversion
    rate = taps.up * from_rate
    pass_edge = design.PASSBAND_EDGE_HZ / rate
    stop_edge = (min(conversion) / 2 + design.STOPBAND_MARGIN_HZ) / rate
    ripple, worst = design._response(np, prototype(taps, from_rate), taps.up, pass_edge, stop_edge)
    assert ripple <= design.PASSBAND_RIPPLE_DB
    assert -20 * np.log10(worst) >= design.STOPBAND_ATTENUATION_DB


@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_simd_lanes_cannot_overflow(conversion):
    taps = filter_taps(*conversion)
    assert taps.taps_per_phase % 8 == 0
    assert all(tap != -32768 for phase in taps.phases for tap in phase)
    design._check_no_overflow(taps.phases)
