"""The speech dials of a call and the fixed limits of its conversation.

``PhoneDials`` carries the ``voice.phone.*`` settings as the call reads them once at
answer (spec: telephony.md "Speech dials for calls"); the constants are the limits the
spec fixes and the ones we chose where it is silent (docs/decisions.md, "Calls").
"""

from __future__ import annotations

__all__ = [
    "END_OF_TURN_PROBABILITY",
    "MAX_TURN_SECONDS",
    "PEER_SILENCE_SECONDS",
    "TURN_HOLD_FACTOR",
    "PhoneDials",
]

from ..records import frozen

# spec: telephony.md "Limits" — "Connection silent before it is given up on: 5 seconds".
PEER_SILENCE_SECONDS = 5.0

# spec: "Speech dials for calls" — "no detector may hold a single turn longer than four
# times the configured pause".
TURN_HOLD_FACTOR = 4

#: A turn-detection answer at or above this probability ends the caller's turn.
END_OF_TURN_PROBABILITY = 0.5

#: The longest a caller's turn may run before it is taken as finished: steady noise
#: above the speech level would otherwise hold the line open for ever.
MAX_TURN_SECONDS = 30.0


@frozen
class PhoneDials:
    """``voice.phone.*`` as read for one call; defaults are the telephone column."""

    silence_threshold_ms: int = 900
    min_speech_ms: int = 80
    turn_detection: bool = True
    speech_rms: float = 0.004
    barge_rms: float = 0.004
    barge_min_ms: int = 100

    @property
    def pause_seconds(self) -> float:
        """The configured pause: how long the caller is quiet before the turn ends."""
        return self.silence_threshold_ms / 1000.0

    @property
    def hold_seconds(self) -> float:
        """The longest a turn may stay open after the caller went quiet."""
        return TURN_HOLD_FACTOR * self.pause_seconds
