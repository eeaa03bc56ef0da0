"""Streaming resampler (8 <-> 16 kHz, 24 -> 16 and 8 kHz, 22.05 -> 16 kHz): kernel or twin."""

__all__ = ("Resampler", "resample")

from typing import TYPE_CHECKING

from kernels import NO_EXTENSIONS

if TYPE_CHECKING or NO_EXTENSIONS:
    from kernels._resample_py import Resampler, resample
else:
    try:
        from kernels._resample_c import Resampler, resample
    except ImportError:  # not built (BUILD_KERNELS=no); tests/kernels fails if it should have been
        from kernels._resample_py import Resampler, resample
