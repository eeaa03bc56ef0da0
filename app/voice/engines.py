"""Which speech engines a call uses, chosen from the ``voice_live.*`` settings.

What belongs here: ``CallEngines`` (the synthesiser, recogniser and optional turn
detector one call talks through) and ``engines_for_calls``, which reads the settings
and the sealed keys and builds them. The engines themselves are in
``adapters.speech``; tests may build ``CallEngines(...)`` directly with fakes.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.speech import Recogniser, Synthesiser, TurnDetector

__all__ = ["CallEngines"]


@dataclass(frozen=True, slots=True)
class CallEngines:
    """The engines of one call. ``turn_detector`` is None when no turn-detection
    service is configured (``voice.turn_detection_url`` empty)."""

    synthesiser: Synthesiser
    recogniser: Recogniser
    turn_detector: TurnDetector | None = None
