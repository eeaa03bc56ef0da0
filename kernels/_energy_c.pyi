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
        sample_rate: int = 8000,
        *,
        speech_threshold: float = 0.012,
        min_speech_ms: int = 250,
        silence_threshold_ms: int = 900,
        barge_threshold: float = 0.035,
        barge_min_ms: int = 240,
    ) -> None: ...
    def reset(self) -> None: ...
    def update(self, frame: Buffer, /) -> int: ...
