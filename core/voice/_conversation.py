"""One call's conversation as a sans-IO machine: who may speak, when a turn ends.

``CallConversation`` is fed inputs (``_events``) with ``now`` in seconds on the
adapter's monotonic clock and returns the actions to carry out. It never reads a
clock: ``deadline`` says when ``handle_timer`` must be called.

All transition logic lives in the two tables at the end of ``CallConversation``:
``_TABLE`` (phase → input type → handler) and ``_ANY_PHASE`` (the inputs that mean the
same in every phase), with the handlers they name. An input neither holds leaves the
call as it is: speech during the opening, a transcript the call no longer waits for, a
barge-in while nothing is playing.

spec: telephony.md —

* "Opening of every call": the opening is uninterruptible (speech across it is
  neither answered nor acted on) and fail-closed (``notice_failed``).
* "Speech dials for calls": a turn ends after ``silence_threshold_ms`` of quiet once
  the caller spoke for ``min_speech_ms``; with turn detection the detector may hold the
  turn, one that fails or times out is not asked again that call, and no turn is held
  longer than four times the pause; the caller speaking over the agent at
  ``barge_rms`` for ``barge_min_ms`` stops playback at once. What the caller says over
  the answer (or while it is still being written) is the next turn, not lost.
* "Limits": a connection silent for 5 seconds is given up on.
"""

from __future__ import annotations

__all__ = ["OPENING_UTTERANCE", "CallConversation", "Phase"]

import enum
from collections.abc import Callable
from typing import ClassVar

from ..call_outcome import CallInput
from ._dials import END_OF_TURN_PROBABILITY, MAX_TURN_SECONDS, PEER_SILENCE_SECONDS, PhoneDials
from . import _events as ev  # the inputs and actions: ev.CallerAudio, ev.Speak …

OPENING_UTTERANCE = 0


class Phase(enum.Enum):
    """Where a call's conversation stands."""

    #: Playing the opening; the caller is not listened to.
    OPENING = "opening"
    #: Waiting for the caller to speak.
    LISTENING = "listening"
    #: The caller is speaking; their audio is kept for the turn.
    HEARING = "hearing"
    #: The caller paused; the turn's audio is being transcribed.
    RECOGNISING = "recognising"
    #: The turn detector is asked whether the caller finished.
    JUDGING = "judging"
    #: The detector said the caller has more to say: wait for it, up to the hold limit.
    HOLDING = "holding"
    #: The agent answers the turn and its answer is spoken.
    REPLYING = "replying"
    #: The call is over; nothing more happens.
    ENDED = "ended"


_P = Phase
Handler = Callable[["CallConversation", ev.Input, float], Phase]


class CallConversation:
    """The conversation of one call. Call ``start(now)`` once, then ``handle`` each
    input and ``handle_timer`` whenever ``deadline`` passes; carry out every action
    returned, in order."""

    def __init__(self, opening: str, dials: PhoneDials, *, turn_detection: bool = True) -> None:
        self.opening = opening
        self.dials = dials
        #: Whether the turn detector may still be asked this call (configured, and it
        #: has not failed or timed out yet).
        self.detector_usable = dials.turn_detection and turn_detection
        self._phase = Phase.OPENING
        self._actions: list[ev.Action] = []
        self._last_audio_at = 0.0
        self._heard_audio = False
        self._turn = 0
        self._turn_started_at = 0.0
        self._quiet_since = 0.0
        self._request = 0
        self._awaiting: int | None = None  # the request whose answer is waited for
        self._transcript = ""
        self._reply: int | None = None  # the utterance being answered and spoken
        self._playing = False
        #: Whether the caller is speaking now (between the detector's start and end).
        self._caller_speaking = False
        self._ending: ev.EndCall | None = None

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def ending(self) -> ev.EndCall | None:
        """How the call ended, once it has."""
        return self._ending

    @property
    def deadline(self) -> float | None:
        """When ``handle_timer`` must next be called; None once the call is over."""
        if self._phase is Phase.ENDED:
            return None
        deadlines = [self._last_audio_at + PEER_SILENCE_SECONDS]
        if self._phase is Phase.HEARING:
            deadlines.append(self._turn_started_at + MAX_TURN_SECONDS)
        elif self._phase in (Phase.JUDGING, Phase.HOLDING):
            deadlines.append(self._hold_deadline)
        return min(deadlines)

    @property
    def _hold_deadline(self) -> float:
        return self._quiet_since + self.dials.hold_seconds

    def start(self, now: float) -> list[ev.Action]:
        """The call is connected: play the opening."""
        self._last_audio_at = now
        return [ev.Speak(OPENING_UTTERANCE, self.opening)]

    def handle(self, given: ev.Input, now: float) -> list[ev.Action]:
        """Apply one input; return the actions it causes."""
        if self._phase is Phase.ENDED:
            return []
        if isinstance(given, ev.CallerAudio):
            self._last_audio_at, self._heard_audio = now, True
            if given.speech_started or given.speech_ended:
                self._caller_speaking = given.speech_started and not given.speech_ended
        kind = type(given)
        handler = self._TABLE[self._phase].get(kind) or self._ANY_PHASE.get(kind)
        if handler is not None:
            self._phase = handler(self, given, now)
        return self._take_actions()

    def hear_quiet(self, now: float) -> None:
        """``handle(CallerAudio(), now)`` for caller audio in which the detector found
        nothing — most of a call's 50 frames a second. No phase acts on such audio,
        so it causes no action and no change of phase, and the deadline only moves
        later: all it does is count as audio from the peer."""
        if self._phase is not Phase.ENDED:
            self._last_audio_at, self._heard_audio = now, True

    def handle_timer(self, now: float) -> list[ev.Action]:
        """Apply the passing of time up to ``now``."""
        if self._phase is Phase.ENDED:
            return []
        if now >= self._last_audio_at + PEER_SILENCE_SECONDS:
            # spec: "Limits" — 5 seconds of silence from the peer: give up. A
            # connection that never carried audio had no media at all.
            given = CallInput.MEDIA_LOST if self._heard_audio else CallInput.NO_MEDIA
            self._phase = self._end(given, hang_up=True)
        elif self._phase is Phase.HEARING and now >= self._turn_started_at + MAX_TURN_SECONDS:
            self._phase = self._turn_paused(now)
        elif self._phase is Phase.JUDGING and now >= self._hold_deadline:
            # The detector did not answer within the hold: it timed out, and is not
            # asked again this call.
            self.detector_usable = False
            self._phase = self._respond()
        elif self._phase is Phase.HOLDING and now >= self._hold_deadline:
            self._phase = self._respond()
        return self._take_actions()

    # -- helpers shared by the handlers

    def _take_actions(self) -> list[ev.Action]:
        actions, self._actions = self._actions, []
        return actions

    def _end(self, given: CallInput, *, hang_up: bool) -> Phase:
        self._ending = ev.EndCall(given, hang_up)
        self._actions.append(self._ending)
        return Phase.ENDED

    def _capture(self, now: float) -> Phase:
        self._turn += 1
        self._turn_started_at = now
        self._awaiting = None
        self._transcript = ""
        self._actions.append(ev.CaptureTurn(self._turn))
        return Phase.HEARING

    def _ask(self) -> int:
        self._request += 1
        self._awaiting = self._request
        return self._request

    def _turn_paused(self, now: float) -> Phase:
        # The detector reports the end of speech once the caller has been quiet for
        # the pause; the hold is counted from when the quiet began.
        self._quiet_since = now - self.dials.pause_seconds
        self._actions.append(ev.Recognise(self._ask(), self._turn))
        return Phase.RECOGNISING

    def _respond(self) -> Phase:
        self._awaiting = None
        self._reply, self._playing = self._turn, False
        self._actions.append(ev.Respond(self._turn, self._transcript))
        return Phase.REPLYING

    def _drop(self) -> Phase:
        self._awaiting = None
        self._actions.append(ev.DropTurn(self._turn))
        return Phase.LISTENING

    def _answers(self, request: int) -> bool:
        return request == self._awaiting

    # -- handlers: (phase, input) -> next phase

    def _opening_finished(self, given: ev.SpeechFinished, now: float) -> Phase:
        if given.utterance != OPENING_UTTERANCE:
            return self._phase
        return Phase.LISTENING

    def _opening_failed(self, given: ev.SpeechFailed, now: float) -> Phase:
        # spec: "Opening of every call" — fail-closed: the call ends, notice_failed.
        return self._end(CallInput.NOTICE_UNAVAILABLE, hang_up=True)

    def _listening_audio(self, given: ev.CallerAudio, now: float) -> Phase:
        # A speech end without a start here is speech that began during the opening
        # or the answer: it is not a turn.
        return self._capture(now) if given.speech_started else self._phase

    def _hearing_audio(self, given: ev.CallerAudio, now: float) -> Phase:
        return self._turn_paused(now) if given.speech_ended else self._phase

    def _resumed(self, given: ev.CallerAudio, now: float) -> Phase:
        # The caller went on speaking: the turn continues, and whatever was asked
        # about it so far no longer counts.
        if not given.speech_started:
            return self._phase
        self._awaiting = None
        return Phase.HEARING

    def _transcribed(self, given: ev.Transcribed, now: float) -> Phase:
        if not self._answers(given.request):
            return self._phase
        text = " ".join(given.text.split())
        if not text:
            return self._drop()
        self._transcript = text
        if self.detector_usable and now < self._hold_deadline:
            self._actions.append(ev.JudgeTurn(self._ask(), text))
            return Phase.JUDGING
        return self._respond()

    def _recognition_failed(self, given: ev.RecognitionFailed, now: float) -> Phase:
        # spec: "Errors" symptom "notice then silence (recognition unreachable)": the
        # turn is lost and the call goes on.
        return self._drop() if self._answers(given.request) else self._phase

    def _judged(self, given: ev.TurnJudged, now: float) -> Phase:
        if not self._answers(given.request):
            return self._phase
        if given.probability >= END_OF_TURN_PROBABILITY:
            return self._respond()
        self._awaiting = None
        return Phase.HOLDING

    def _judge_failed(self, given: ev.TurnJudgeFailed, now: float) -> Phase:
        if not self._answers(given.request):
            return self._phase
        self.detector_usable = False
        return self._respond()

    def _keys_pressed(self, given: ev.KeysPressed, now: float) -> Phase:
        # Keys are a whole turn at once: whatever was being heard of the caller's
        # speech meanwhile is dropped (answers to it no longer count), and the entry
        # is answered.
        if self._phase is not Phase.LISTENING:
            self._actions.append(ev.DropTurn(self._turn))
        self._turn += 1
        self._transcript = given.text
        return self._respond()

    def _reply_playing(self, given: ev.SpeechPlaying, now: float) -> Phase:
        if given.utterance == self._reply:
            self._playing = True
        return self._phase

    def _replying_audio(self, given: ev.CallerAudio, now: float) -> Phase:
        # Speech that starts while the answer plays is a barge-in, whether it began
        # over the agent's voice or in a pause between its sentences.
        if not ((given.barge_in or given.speech_started) and self._playing):
            return self._phase
        self._actions.append(ev.StopSpeaking())
        self._playing = False
        return self._capture(now)

    def _speech_finished(self, given: ev.SpeechFinished, now: float) -> Phase:
        # An answer ends the call when the agent decided so, even one the caller
        # talked over (the decision — a transfer that passed the gate — stands).
        if given.ending is not None and given.utterance != OPENING_UTTERANCE:
            return self._end(given.ending, hang_up=True)
        if self._phase is Phase.REPLYING and given.utterance == self._reply:
            self._reply = None
            # The caller began before the answer played (or between its last frame
            # and its end) and speaks still: that speech is the next turn.
            return self._capture(now) if self._caller_speaking else Phase.LISTENING
        return self._phase

    def _speech_failed(self, given: ev.SpeechFailed, now: float) -> Phase:
        # Synthesis went away mid-call: a line that cannot speak ends the call.
        if given.utterance == self._reply:
            return self._end(CallInput.SERVICE_HUNG_UP, hang_up=True)
        return self._phase

    def _hung_up(self, given: ev.CallerHungUp, now: float) -> Phase:
        return self._end(CallInput.CALLER_HUNG_UP, hang_up=False)

    def _lost(self, given: ev.ConnectionLost, now: float) -> Phase:
        return self._end(CallInput.MEDIA_LOST, hang_up=False)

    # The machine's tables stand in the class whose handlers they name, as pickle
    # keeps its dispatch table, so a handler is named without ``CallConversation.``.

    #: phase -> {input type -> handler}. Inputs a phase does not list fall back to
    #: ``_ANY_PHASE``. Keys pressed while the agent speaks or during the opening are kept
    #: by the adapter until they can be answered (``KeyEntry``); elsewhere they make a turn.
    _TABLE: ClassVar[dict[Phase, dict[type, Handler]]] = {
        _P.OPENING: {ev.SpeechFinished: _opening_finished, ev.SpeechFailed: _opening_failed},
        _P.LISTENING: {ev.CallerAudio: _listening_audio, ev.KeysPressed: _keys_pressed},
        _P.HEARING: {ev.CallerAudio: _hearing_audio, ev.KeysPressed: _keys_pressed},
        _P.RECOGNISING: {ev.CallerAudio: _resumed, ev.Transcribed: _transcribed,
                         ev.RecognitionFailed: _recognition_failed,
                         ev.KeysPressed: _keys_pressed},
        _P.JUDGING: {ev.CallerAudio: _resumed, ev.TurnJudged: _judged,
                     ev.TurnJudgeFailed: _judge_failed, ev.KeysPressed: _keys_pressed},
        _P.HOLDING: {ev.CallerAudio: _resumed, ev.KeysPressed: _keys_pressed},
        _P.REPLYING: {ev.CallerAudio: _replying_audio, ev.SpeechPlaying: _reply_playing},
        _P.ENDED: {},
    }

    #: Inputs that mean the same in every phase but ``ENDED``.
    _ANY_PHASE: ClassVar[dict[type, Handler]] = {
        ev.CallerHungUp: _hung_up,
        ev.ConnectionLost: _lost,
        ev.SpeechFinished: _speech_finished,
        ev.SpeechFailed: _speech_failed,
    }
