# Defaults are written ``...``, as stubs write them, so that their values are not stated
# a third time: the .pyx and its twin give them, and tests/kernels holds the two alike.

from typing_extensions import Buffer

def rms(frame: Buffer, /) -> float: ...
def zero_crossings(frame: Buffer, /) -> int: ...

class Detector:
    sample_rate: int
    speech_threshold: float
    barge_threshold: float
    speaking: bool
    level: float
    def __init__(
        self,
        sample_rate: int = ...,
        *,
        speech_threshold: float = ...,
        min_speech_ms: int = ...,
        silence_threshold_ms: int = ...,
        barge_threshold: float = ...,
        barge_min_ms: int = ...,
    ) -> None: ...
    def reset(self) -> None: ...
    def update(self, frame: Buffer, /) -> int: ...
