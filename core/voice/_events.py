"""What a call's conversation is told, and what it asks for.

Inputs are past-tense facts the adapter reports (a frame of caller audio with what the
energy detector made of it, a transcript, a turn-detection answer, progress of the
agent's speech, the peer going away). Actions are imperatives the adapter carries out
(speak, keep the caller's audio, recognise it, ask the turn detector, answer, stop
speaking, end the call). All are frozen, slotted dataclasses.

``request`` numbers tie an answer to the question it answers: a transcript or a
turn-detection answer for a request the conversation no longer waits for (the caller
went on speaking) is ignored. ``utterance`` 0 is the opening; utterance ``n`` is the
answer to turn ``n``.
"""

from __future__ import annotations

__all__ = [
    "Action",
    "CallerAudio",
    "CallerHungUp",
    "CaptureTurn",
    "ConnectionLost",
    "DropTurn",
    "EndCall",
    "Input",
    "JudgeTurn",
    "KeysPressed",
    "Recognise",
    "RecognitionFailed",
    "Respond",
    "Speak",
    "SpeechFailed",
    "SpeechFinished",
    "SpeechPlaying",
    "StopSpeaking",
    "Transcribed",
    "TurnJudgeFailed",
    "TurnJudged",
]

from ..call_outcome import CallInput
from ..records import frozen

# -- inputs


@frozen
class CallerAudio:
    """One frame of caller audio arrived; the flags are what the energy detector
    reported for it (speech began, speech ended, loud enough long enough to barge in)."""

    speech_started: bool = False
    speech_ended: bool = False
    barge_in: bool = False


@frozen
class CallerHungUp:
    """The peer ended the call: a hangup frame, a closed socket, the carrier's stop."""


@frozen
class ConnectionLost:
    """The audio connection broke without a hangup (reset, protocol error, fault)."""


@frozen
class Transcribed:
    """Recognition of the turn's audio for ``request`` gave ``text`` ('' for nothing)."""

    request: int
    text: str


@frozen
class KeysPressed:
    """The caller finished keying an entry; ``text`` is the turn it makes
    (``core.voice.KeyEntry``)."""

    text: str


@frozen
class RecognitionFailed:
    """The recogniser was unavailable for ``request``."""

    request: int


@frozen
class TurnJudged:
    """The turn detector answered ``request``: probability the caller finished."""

    request: int
    probability: float


@frozen
class TurnJudgeFailed:
    """The turn detector failed for ``request``."""

    request: int


@frozen
class SpeechPlaying:
    """The first audio of ``utterance`` went out to the caller."""

    utterance: int


@frozen
class SpeechFinished:
    """``utterance`` is over: all of it played (or the rest was muted by a barge-in)
    and, for an answer, the agent finished. ``ending`` is how the agent decided the
    call ends (``SERVICE_HUNG_UP``, ``TRANSFERRED``), or None to go on."""

    utterance: int
    ending: CallInput | None = None


@frozen
class SpeechFailed:
    """Synthesis was unavailable for ``utterance``."""

    utterance: int


Input = (CallerAudio | CallerHungUp | ConnectionLost | Transcribed | RecognitionFailed
         | TurnJudged | TurnJudgeFailed | SpeechPlaying | SpeechFinished | SpeechFailed
         | KeysPressed)

# -- actions


@frozen
class Speak:
    """Synthesise ``text`` and play it; the opening cannot be interrupted."""

    utterance: int
    text: str


@frozen
class CaptureTurn:
    """Start keeping caller audio for ``turn``, beginning with the audio kept from just
    before (speech is reported only after ``min_speech_ms`` of it)."""

    turn: int


@frozen
class Recognise:
    """Transcribe the audio of ``turn`` kept so far; answer with ``Transcribed`` or
    ``RecognitionFailed`` for ``request``. Keep capturing: the caller may go on."""

    request: int
    turn: int


@frozen
class JudgeTurn:
    """Ask the turn detector whether ``transcript`` is a finished turn; answer with
    ``TurnJudged`` or ``TurnJudgeFailed`` for ``request``."""

    request: int
    transcript: str


@frozen
class Respond:
    """The caller's turn is over: stop capturing, give ``transcript`` to the agent and
    speak its answer as ``utterance`` (after any earlier answer has finished)."""

    utterance: int
    transcript: str


@frozen
class DropTurn:
    """Nothing usable was heard in ``turn``: stop capturing and forget its audio."""

    turn: int


@frozen
class StopSpeaking:
    """The caller barged in: stop playback at once and say nothing more of the answer
    in progress (the agent still finishes it, for the transcript)."""


@frozen
class EndCall:
    """The call is over with ``given`` as its outcome input. ``hang_up`` is whether our
    side must still end the connection (not when the peer already did)."""

    given: CallInput
    hang_up: bool


Action = Speak | CaptureTurn | Recognise | JudgeTurn | Respond | DropTurn | StopSpeaking | EndCall
