"""What the simulated caller does, step by step, one 20 ms frame at a time.

A script is a list of steps. ``Say`` is synthesised before the call is rung (so the
synthesiser's own speed never shows in the call's timings) and becomes ``Play``.
``Caller`` walks the script frame by frame: each frame of the call it is told what
the caller heard in that frame and answers what the caller does — a frame of audio,
a key, nothing (a dead line), or hanging up.

Steps:

* ``Say(text)`` / ``Play(pcm)`` — speak, then carry on at once;
* ``Listen(quiet_ms, timeout_s)`` — silence until the line has spoken and then been
  quiet for ``quiet_ms``, or ``timeout_s`` passed;
* ``AwaitSpeech(timeout_s)`` — silence until the line is heard speaking;
* ``Pause(ms)`` — silence for a while;
* ``Press(digit)`` — one key;
* ``FutureEvent()`` — the carrier sends an event of its stream that this service does
  not know (carriers add events over time); Asterisk sends nothing it does not
  document, so on the pbx transport it is a frame of silence like any other;
* ``GoSilent(timeout_s)`` — the caller's side stops sending anything at all, as a
  broken network would, until the line gives up or ``timeout_s`` passed;
* ``AwaitHangup(timeout_s)`` — silence until the line ends the call.

When the script runs out the caller hangs up.
"""

from __future__ import annotations

__all__ = [
    "Action",
    "AwaitHangup",
    "AwaitSpeech",
    "Caller",
    "FutureEvent",
    "GoSilent",
    "Listen",
    "Pause",
    "Play",
    "Press",
    "Say",
    "Step",
    "Turn",
    "prepare",
]

import enum
from typing import Iterable, Union

from adapters.call_simulator.audio import FRAME_SECONDS, SILENT_FRAME, frames_of, to_call_rate
from adapters.speech import Synthesiser
from core.records import frozen


@frozen
class Say:
    text: str


@frozen
class Play:
    """8 kHz signed linear audio to speak; ``label`` names it in the report."""

    pcm: bytes
    label: str = "audio"


@frozen
class Listen:
    quiet_ms: int = 1200
    timeout_s: float = 30.0


@frozen
class AwaitSpeech:
    timeout_s: float = 15.0


@frozen
class Pause:
    ms: int


@frozen
class Press:
    digit: str


@frozen
class FutureEvent:
    name: str = "heartbeat"


@frozen
class GoSilent:
    timeout_s: float = 15.0


@frozen
class AwaitHangup:
    timeout_s: float = 30.0


Step = Union[Say, Play, Listen, AwaitSpeech, Pause, Press, FutureEvent, GoSilent, AwaitHangup]


async def prepare(steps: Iterable[Step], synthesiser: Synthesiser | None) -> list[Step]:
    """The script with every ``Say`` synthesised into a ``Play``.

    Raises ``SpeechUnavailable`` from the synthesiser, or ``ValueError`` when a script
    says something and no synthesiser was given."""
    prepared: list[Step] = []
    for step in steps:
        if isinstance(step, Say):
            if synthesiser is None:
                raise ValueError("the script says something but no synthesiser was given")
            chunks = [chunk async for chunk in synthesiser.stream(step.text)]
            pcm = to_call_rate(b"".join(chunks), synthesiser.sample_rate)
            prepared.append(Play(pcm, label=step.text))
        else:
            prepared.append(step)
    return prepared


class Action(enum.Enum):
    """What the caller does in one frame besides (or instead of) sending audio."""

    #: Send the frame's audio.
    AUDIO = "audio"
    #: Press the key in ``Caller.digit`` (and send the frame's audio).
    KEY = "key"
    #: Send an event the service does not know, named in ``Caller.digit`` (and the
    #: frame's audio).
    FUTURE_EVENT = "future_event"
    #: Send nothing this frame: the caller's side has gone dead.
    NOTHING = "nothing"
    #: Hang up now.
    HANG_UP = "hang_up"


@frozen
class Turn:
    """One stretch of caller speech, for the report: what it was and when it ended
    (seconds from the start of the call's audio)."""

    label: str
    started_s: float
    ended_s: float


class Caller:
    """Walks a prepared script one frame at a time.

    Call ``next_frame(now_s, heard_audible)`` once per frame: ``heard_audible`` says
    whether the caller heard the line speak in the previous frame. It returns the
    action and the audio to send; ``digit`` holds the key of a ``KEY`` action.
    ``turns`` records each stretch of speech the caller made.
    """

    def __init__(self, steps: list[Step]) -> None:
        if any(isinstance(step, Say) for step in steps):
            raise ValueError("prepare() the script first: Say steps must be synthesised")
        self._steps = list(steps)
        self._index = -1
        self._frames: list[bytes] = []
        self._frame_index = 0
        self._step_started_s = 0.0
        self._heard_line = False
        self._quiet_since_s: float | None = None
        self.digit = ""
        self.turns: list[Turn] = []
        self._last_spoken_s = 0.0
        self._line_ended = False

    def line_ended(self) -> None:
        """The line ended the call: waiting steps are over."""
        self._line_ended = True

    def next_frame(self, now_s: float, heard_audible: bool) -> tuple[Action, bytes]:
        if self._index < 0:
            self._advance(now_s)
        while True:
            if self._index >= len(self._steps):
                return Action.HANG_UP, SILENT_FRAME
            outcome = self._step_frame(self._steps[self._index], now_s, heard_audible)
            if outcome is not None:
                return outcome
            self._advance(now_s)

    def _advance(self, now_s: float) -> None:
        self._index += 1
        self._step_started_s = now_s
        self._heard_line = False
        self._quiet_since_s = None
        self._frame_index = 0
        step = self._steps[self._index] if self._index < len(self._steps) else None
        self._frames = frames_of(step.pcm) if isinstance(step, Play) else []

    def _step_frame(self, step: Step, now_s: float,
                    heard_audible: bool) -> tuple[Action, bytes] | None:
        """The frame the step makes now, or None when the step is over."""
        elapsed = now_s - self._step_started_s
        if isinstance(step, Play):
            if self._frame_index >= len(self._frames):
                # The frame sent last carried the speech's final 20 ms: the caller
                # stopped speaking when it left.
                self.turns.append(Turn(step.label, self._step_started_s, self._last_spoken_s))
                return None
            frame = self._frames[self._frame_index]
            self._frame_index += 1
            self._last_spoken_s = now_s
            return Action.AUDIO, frame
        if isinstance(step, (Press, FutureEvent)):
            if self._frame_index:
                return None
            self._frame_index = 1
            if isinstance(step, Press):
                self.digit = step.digit
                return Action.KEY, SILENT_FRAME
            self.digit = step.name
            return Action.FUTURE_EVENT, SILENT_FRAME
        if isinstance(step, Pause):
            return (Action.AUDIO, SILENT_FRAME) if elapsed * 1000 < step.ms else None
        if self._line_ended:
            return None
        if isinstance(step, Listen):
            return self._listen(step, now_s, elapsed, heard_audible)
        if isinstance(step, AwaitSpeech):
            done = heard_audible or elapsed >= step.timeout_s
            return None if done else (Action.AUDIO, SILENT_FRAME)
        if isinstance(step, GoSilent):
            return None if elapsed >= step.timeout_s else (Action.NOTHING, b"")
        assert isinstance(step, AwaitHangup)
        return None if elapsed >= step.timeout_s else (Action.AUDIO, SILENT_FRAME)

    def _listen(self, step: Listen, now_s: float, elapsed: float,
                heard_audible: bool) -> tuple[Action, bytes] | None:
        if heard_audible:
            self._heard_line = True
            self._quiet_since_s = None
        elif self._heard_line and self._quiet_since_s is None:
            self._quiet_since_s = now_s - FRAME_SECONDS
        quiet_long_enough = (self._quiet_since_s is not None
                             and (now_s - self._quiet_since_s) * 1000 >= step.quiet_ms)
        if quiet_long_enough or elapsed >= step.timeout_s:
            return None
        return Action.AUDIO, SILENT_FRAME
