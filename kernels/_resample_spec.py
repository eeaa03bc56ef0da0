"""What both resampler twins share: the supported conversions and their filters."""

from __future__ import annotations

__all__ = ("FilterTaps", "filter_taps", "output_length")

from typing import NamedTuple

from kernels._resample_taps import FILTERS


class FilterTaps(NamedTuple):
    """One conversion's polyphase filter (see ``_resample_design``)."""

    up: int  #: interpolation factor L (output rate / gcd)
    down: int  #: decimation factor M (input rate / gcd)
    delay_seconds: float  #: group delay of the linear-phase filter
    phases: tuple[tuple[int, ...], ...]  #: L branches of Q15 taps, oldest input sample first

    @property
    def taps_per_phase(self) -> int:
        return len(self.phases[0])


def filter_taps(from_rate: int, to_rate: int) -> FilterTaps:
    """The filter converting ``from_rate`` to ``to_rate``; ValueError if there is none."""
    try:
        return FilterTaps(**FILTERS[from_rate, to_rate])
    except KeyError:
        supported = ", ".join(f"{a} -> {b}" for a, b in FILTERS)
        raise ValueError(
            f"no resampler from {from_rate} Hz to {to_rate} Hz (supported: {supported})"
        ) from None


def output_length(samples: int, position: int, up: int, down: int) -> int:
    """How many outputs ``samples`` more input samples complete.

    ``position`` is where the next output falls, in 1/``up`` input samples from
    the first sample not yet fed. After N samples in all, a resampler has
    produced ceil(N * up / down) outputs, however the N samples were split.
    """
    remaining = samples * up - position
    return -(-remaining // down) if remaining > 0 else 0
