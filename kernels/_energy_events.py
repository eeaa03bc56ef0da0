"""What a voice-activity detector reports for a frame; shared by both energy twins."""

__all__ = ("VoiceEvent",)

import enum


class VoiceEvent(enum.IntFlag):
    """Bits of the int ``Detector.update`` returns (0: nothing happened).

    The detector returns a plain int, cheap to make per frame; test it with
    ``events & VoiceEvent.BARGE_IN``. What an event means for the call is
    decided by the caller, not here.
    """

    #: Loud enough for long enough: the caller started speaking.
    SPEECH_START = 1
    #: Quiet for the silence threshold after speech: the caller stopped.
    SPEECH_END = 2
    #: Louder still for the barge-in minimum: reported once per loud run.
    BARGE_IN = 4
