"""Speech engines for calls: synthesis, recognition and turn detection.

The protocols and the error are in ``base.py``; every engine raises only
``SpeechUnavailable``. Build the engines a call uses with
``app.voice.engines.engines_for_calls``.
"""

from adapters.speech.base import (
    RECOGNITION_RATES,
    SYNTHESIS_RATES,
    Recogniser,
    SpeechTimeouts,
    SpeechUnavailable,
    Synthesiser,
    TurnDetector,
)

__all__ = [
    "RECOGNITION_RATES",
    "SYNTHESIS_RATES",
    "Recogniser",
    "SpeechTimeouts",
    "SpeechUnavailable",
    "Synthesiser",
    "TurnDetector",
]
