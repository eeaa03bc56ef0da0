"""Frame RMS, zero crossings and the speech/barge-in detector: the compiled kernel, or its twin."""

__all__ = ("Detector", "VoiceEvent", "rms", "zero_crossings")

from typing import TYPE_CHECKING

from kernels import NO_EXTENSIONS
from kernels._energy_events import VoiceEvent

if TYPE_CHECKING or NO_EXTENSIONS:
    from kernels._energy_py import Detector, rms, zero_crossings
else:
    try:
        from kernels._energy_c import Detector, rms, zero_crossings
    except ImportError:  # not built (BUILD_KERNELS=no); tests/kernels fails if it should have been
        from kernels._energy_py import Detector, rms, zero_crossings
