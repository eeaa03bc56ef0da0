"""What every speech engine promises: the three protocols and the one error.

What belongs here: ``Synthesiser``, ``Recogniser`` and ``TurnDetector`` (the shapes the
call's voice pipeline codes against), ``SpeechUnavailable`` (the only exception an
engine lets out), ``SpeechTimeouts`` and the sample rates an engine may speak or hear.
The engines themselves live beside this module, one concern each.
"""

from __future__ import annotations

__all__ = [
    "RECOGNITION_RATES",
    "SYNTHESIS_RATES",
    "Recogniser",
    "SpeechTimeouts",
    "SpeechUnavailable",
    "Synthesiser",
    "TurnDetector",
    "whole_samples",
]

import functools
from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from core.records import frozen

#: Rates a synthesiser may speak at: the ones kernels/resample converts to 8 kHz.
SYNTHESIS_RATES = (8000, 16000, 24000)
#: Rates a recogniser may be handed a turn at (spec: "Speech dials", stt_sample_rate).
RECOGNITION_RATES = (8000, 16000)


class SpeechUnavailable(Exception):
    """The engine could not be reached, answered an error, or timed out.

    ``engine`` names it (a host, ``local eSpeak NG``) for the log and the readiness
    check; the message says what went wrong in words an operator can act on;
    ``status`` is the HTTP status when a remote engine answered one.
    """

    def __init__(self, message: str, *, engine: str = "", status: int | None = None) -> None:
        super().__init__(f"{engine}: {message}" if engine else message)
        self.message = message
        self.engine = engine
        self.status = status

    def __reduce__(self):  # pickled whole: local recognition raises it in a worker process
        rebuild = functools.partial(type(self), engine=self.engine, status=self.status)
        return rebuild, (self.message,)


def whole_samples(pcm16: bytes, sample_rate: int) -> bytes:
    """A recogniser's input checked: the rate one of ``RECOGNITION_RATES`` (else
    ValueError, a caller's mistake), a stray last byte dropped."""
    if sample_rate not in RECOGNITION_RATES:
        raise ValueError(f"recognition runs at 8000 or 16000 Hz, not {sample_rate}")
    return pcm16[: len(pcm16) & ~1]


@frozen
class SpeechTimeouts:
    """``connect``: seconds to get a connection to a remote engine. ``read``: the
    longest silence allowed between two reads of its answer. A call is live, so both
    are short: a caller waiting on a stalled engine hears nothing."""

    connect: float = 3.0
    read: float = 10.0


@runtime_checkable
class Synthesiser(Protocol):
    """Text to speech, streamed."""

    #: Always one of ``SYNTHESIS_RATES``.
    sample_rate: int

    def stream(self, text: str) -> AsyncIterator[bytes]:
        """PCM16 little-endian mono chunks (even length each) as they arrive.
        Raises ``SpeechUnavailable`` before or during the stream."""
        ...


@runtime_checkable
class Recogniser(Protocol):
    """One turn of speech to text."""

    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        """One turn of caller audio (8000 or 16000 Hz) → text ('' for nothing heard).
        Raises ``SpeechUnavailable``."""
        ...


@runtime_checkable
class TurnDetector(Protocol):
    """Semantic end-of-turn detection (spec: DESIGN.md "turn detection")."""

    async def end_of_turn(self, transcript: str) -> float:
        """Probability 0..1 that the caller finished their turn.
        Raises ``SpeechUnavailable``."""
        ...
