"""The voice session of one call: caller audio in, the agent's speech out.

``run_call`` drives ``core.voice.CallConversation`` for one answered call:

* caller audio from the transport (8 kHz PCM) is measured (``kernels.energy``) for
  the speech detector (``core.voice.SpeechDetector``, the ``voice.phone.*`` dials; it
  also hears the level of each frame played), kept for the turn while the
  conversation captures, and fed to the conversation. Speech is kept from its first
  frame with a pre-roll before it, also when it starts over the agent or while the
  answer is still being written;
* the conversation's actions are carried out: the opening and each answer are
  synthesised, resampled to 8 kHz, framed and played every 20 ms (``Player``); a turn
  is resampled to the recognition rate (``kernels.resample``), recognised, judged by the turn detector, and given to the agent; a barge-in stops
  playback at once;
* when the line records, both sides go to the recorder step by step; a recorder that
  fails is dropped, ``on_recording_failed`` is told, and the call goes on;
* keys the caller presses are collected into entries (``core.voice.KeyEntry``: up to
  ``#`` or a pause) and each entry is a turn of its own ("Digits pressed: 1234"),
  answered as soon as the conversation listens.

The agent is passed in (``CallAgent``): the app runs the pipeline with the line's
account and the call's context and stores the transcript. The session returns the
conversation's ``EndCall``: the outcome input for the call log.

Engines raise ``SpeechUnavailable``; any exception from one is treated as the engine
being unavailable (logged), so one bad engine cannot take the call's loop down.
"""

from __future__ import annotations

__all__ = ["CallAgent", "CallSetup", "Recorder", "TurnTimings", "run_call"]

import contextlib
import logging
import math
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from adapters.voice.pacing import loop_clock
from adapters.voice.playback import Framer, Player
from adapters.voice.transport import (
    LINE_RATE,
    CallEngines,
    CallTransport,
    TransportBroken,
)
from core import voice
from core.call_outcome import CallInput
from core.records import frozen
from kernels.energy import rms, zero_crossings
from kernels.resample import Resampler

log = logging.getLogger("svc.voice")

#: Caller audio kept from before the first frame of speech, so a turn starts with its
#: first syllable however quietly it began: a word under noise can begin up to a
#: third of a second before the detector's first frame of it (benchmarks/turns.py).
PREROLL_SECONDS = 0.5
#: Onset runs may hold short gaps: the ring keeps this much beyond the longest one
#: (and the detector may date an onset back by up to ``ONSET_LOOKBACK_MS`` more).
ONSET_SLACK_SECONDS = 0.2
# The detector's bits as plain ints: IntFlag arithmetic is slow for every frame.
_SPEECH_START, _SPEECH_END, _BARGE_IN = (int(bit) for bit in voice.Heard)
#: Line audio waiting for the caller's matching step in the recording, at most.
MAX_RECORDING_LAG_BYTES = 5 * LINE_RATE * 2
#: Time left to send our hangup once the call is over.
HANG_UP_SECONDS = 2.0
#: The opening must carry sound above this level (about -60 dBFS) somewhere: a
#: synthesiser answering with no audio, or with silence only, has not said the notice.
AUDIBLE_RMS = 0.001
#: Where a finished key entry is answered; in the others (the opening, an answer
#: playing) it waits for the conversation to listen again.
_ANSWERS_KEYS = frozenset({voice.Phase.LISTENING, voice.Phase.HEARING, voice.Phase.RECOGNISING,
                           voice.Phase.JUDGING, voice.Phase.HOLDING})


@frozen
class TurnTimings:
    """One answered turn, in seconds from the end of the caller's speech (or of their
    key entry): when the agent was asked (recognised and judged finished), wrote its
    first words and sent its first audio (None when it never did), and when its answer
    had played to the end or was talked over."""

    asked: float
    first_text: float | None
    first_audio: float | None
    finished: float


class CallAgent(Protocol):
    """The agent on a call, as the app provides it."""

    def answer(self, transcript: str, waited: float) -> AsyncIterator[str]:
        """The answer to one turn of the caller, as text pieces while it is written;
        ``waited``: seconds since the caller's speech ended."""
        ...

    async def timed(self, timings: TurnTimings) -> None:
        """Keep the timings of a turn once its answer is over."""
        ...

    def ending(self) -> CallInput | None:
        """After an answer: ``SERVICE_HUNG_UP`` or ``TRANSFERRED`` when the agent decided
        the call ends, else None."""
        ...


class Recorder(Protocol):
    """The recording of a call (``adapters.recorder.CallRecorder``)."""

    def write(self, caller: bytes, line: bytes) -> None: ...

    def close(self) -> None: ...


@frozen
class CallSetup:
    """What a session needs to know of its call."""

    opening: str
    dials: voice.PhoneDials = voice.PhoneDials()
    #: The recogniser's rate: 8000 or 16000 (spec: "Prerequisites").
    recognition_rate: int = 16000


async def run_call(transport: CallTransport, engines: CallEngines, agent: CallAgent,
                   setup: CallSetup, *, recorder: Recorder | None = None,
                   on_recording_failed: Callable[[], Awaitable[None]] | None = None,
                   on_end: Callable[[voice.EndCall], Awaitable[None]] | None = None,
                   ) -> voice.EndCall:
    """Run the call until it ends; returns how it ended.

    ``on_end`` is awaited as soon as the end is decided and before our side hangs up,
    so what it records (the outcome, an approved transfer) is in place when the
    telephone system asks what next. The transport is hung up (when our side ends it)
    but not closed: that is its owner's."""
    session = _CallSession(transport, engines, agent, setup, recorder, on_recording_failed,
                           on_end)
    return await session.run()


async def _letting_go(work: Callable[..., Awaitable[None]], *args: Any) -> None:
    """Run ``work(*args)`` as a task of the call, so that the call's objects go as soon
    as it ends rather than at the garbage collector's next full collection.

    anyio keeps an ended task's exception in a reference cycle (through the frame of
    its task group that collected it), and the exception keeps its traceback's frames,
    whose ``self`` is the whole call. So a task cancelled because the call is over (a
    scope around it was cancelled: nothing of it can run any more) ends here quietly.
    Any other cancellation (a future it awaited was cancelled by someone else) goes on,
    so that the task group ends the call as before; so does a failure, rarer, whose
    cycle waits for the collector."""
    try:
        await work(*args)
    except anyio.get_cancelled_exc_class():
        if anyio.current_effective_deadline() != -math.inf:
            raise  # not the call's end


def _closing(iterator: Any) -> contextlib.AbstractAsyncContextManager[Any]:
    return contextlib.aclosing(iterator) if hasattr(iterator, "aclose") else (
        contextlib.nullcontext(iterator))


class _CallSession:
    def __init__(self, transport: CallTransport, engines: CallEngines, agent: CallAgent,
                 setup: CallSetup, recorder: Recorder | None,
                 on_recording_failed: Callable[[], Awaitable[None]] | None,
                 on_end: Callable[[voice.EndCall], Awaitable[None]] | None) -> None:
        self.transport = transport
        self.on_end = on_end
        self.engines = engines
        self.agent = agent
        self.setup = setup
        self.recorder = recorder
        self.on_recording_failed = on_recording_failed
        dials = setup.dials
        self.conversation = voice.CallConversation(
            setup.opening, dials, turn_detection=engines.turn_detector is not None)
        # The caller's audio is heard and kept at the line's rate; only a turn sent to
        # the recogniser is converted to its rate, once, rather than every frame of a
        # call at the cost of every frame.
        rate = LINE_RATE
        self.detector = voice.SpeechDetector(dials, rate)
        self.player = Player(transport, self._frame_sent)
        self.clock = loop_clock()  # read per frame: the loop's own, not through sniffio
        onset_ms = max(dials.min_speech_ms, dials.barge_min_ms) + voice.ONSET_LOOKBACK_MS
        preroll_bytes = int((onset_ms / 1000 + PREROLL_SECONDS + ONSET_SLACK_SECONDS) * rate) * 2
        # The newest ``preroll_limit`` bytes of caller audio (cut from the front, which
        # a bytearray does without moving the rest).
        self.preroll = bytearray()
        self.preroll_limit = preroll_bytes
        self.preroll_keep = int(PREROLL_SECONDS * rate) * 2
        self.turn_audio: bytearray | None = None  # None while no turn is captured
        #: The caller's speech since its onset (with the pre-roll) while no turn is
        #: captured: speech over the agent's answer becomes the next turn from its start.
        self.speech_audio: bytearray | None = None
        self.turn_limit = int(voice.MAX_TURN_SECONDS * rate) * 2
        self.line_pending = bytearray()  # line audio not yet paired with caller audio
        self.muted: set[int] = set()  # answers the caller talked over
        self.last_answer = voice.OPENING_UTTERANCE  # the answer most recently begun
        self.playing: int | None = None  # the utterance whose frames are going out
        #: When the caller last stopped speaking or finished a key entry: where the
        #: next turn's timings count from.
        self.turn_ended_at: float | None = None
        #: When each answer's first frame went out, by utterance.
        self.first_audio_at: dict[int, float] = {}
        self.keys = voice.KeyEntry()
        self.entries: deque[str] = deque()  # finished key entries not yet answered
        self.reply_lock = anyio.Lock()
        self.ended = anyio.Event()
        self.timer_wake = anyio.Event()
        self.timer_target = float("inf")
        self.tasks: TaskGroup | None = None

    # -- the loop

    async def run(self) -> voice.EndCall:
        try:
            async with anyio.create_task_group() as tasks:
                self.tasks = tasks
                for work in (self._play, self._read, self._keep_time):
                    tasks.start_soon(_letting_go, work)
                self._carry_out(self.conversation.start(self.clock()))
                await self.ended.wait()
                ending = self.conversation.ending
                assert ending is not None
                tasks.cancel_scope.cancel()  # nothing more is heard or said
                with anyio.CancelScope(shield=True):
                    await self._ended(ending)
        finally:
            with anyio.CancelScope(shield=True):
                await self._close_recorder()
            # The player's listener is this session: let go of it, so the call's
            # objects go as soon as it ends, not at the next full collection.
            self.player.forget_listener()
        return ending

    async def _ended(self, ending: voice.EndCall) -> None:
        if self.on_end is not None:
            try:
                await self.on_end(ending)
            except Exception:
                log.exception("the end of the call could not be recorded")
        if ending.hang_up:
            with anyio.move_on_after(HANG_UP_SECONDS):
                try:
                    await self.transport.hang_up()
                except TransportBroken:
                    pass  # gone already: the end is the same

    async def _play(self) -> None:
        await self._losing_connection_on_break(self.player.run, "while playing")

    async def _stop_playback(self) -> None:
        await self._losing_connection_on_break(self.transport.stop_playback,
                                               "while stopping playback")

    async def _losing_connection_on_break(self, work: Callable[[], Awaitable[None]],
                                          doing: str) -> None:
        """Run ``work``; a broken audio connection is the conversation's ConnectionLost."""
        try:
            await work()
        except TransportBroken as exc:
            log.info("audio connection broke %s: %s", doing, exc)
            self._feed(voice.ConnectionLost())

    def _feed(self, given: voice.Input) -> None:
        """Give the conversation one input and carry out what it decides."""
        self._carry_out(self.conversation.handle(given, self.clock()))

    def _carry_out(self, actions: list[voice.Action]) -> None:
        for action in actions:
            _ACTIONS[type(action)](self, action)
        if self.entries and self.conversation.phase in _ANSWERS_KEYS:
            self._feed(voice.KeysPressed(self.entries.popleft()))
        self._check_timer()

    def _check_timer(self) -> None:
        deadline = self._deadline()
        if deadline is not None and deadline < self.timer_target:
            self.timer_wake.set()  # the timer sleeps towards a later deadline

    def _deadline(self) -> float | None:
        """The conversation's deadline, or an open key entry's when sooner."""
        deadline, keys = self.conversation.deadline, self.keys.deadline
        if deadline is None or keys is None:
            return deadline
        return min(deadline, keys)

    async def _keep_time(self) -> None:
        while not self.ended.is_set():
            deadline = self._deadline()
            if deadline is None:
                return
            self.timer_wake, self.timer_target = anyio.Event(), deadline
            with anyio.move_on_after(max(0.0, deadline - self.clock())):
                await self.timer_wake.wait()
            now = self.clock()
            entry = self.keys.expire(now)
            if entry is not None:
                self._entry(entry)
            deadline = self.conversation.deadline
            if deadline is not None and now >= deadline:
                self._carry_out(self.conversation.handle_timer(now))

    async def _read(self) -> None:
        try:
            await self.transport.relay(self._caller_audio, self._caller_key)
            self._feed(voice.CallerHungUp())
        except TransportBroken as exc:
            log.info("audio connection broke: %s", exc)
            self._feed(voice.ConnectionLost())

    def _caller_audio(self, pcm: bytes) -> None:
        if self.recorder is not None:
            self._record(pcm)
        events = self.detector.hear(rms(pcm), zero_crossings(pcm), len(pcm) // 2)
        self._keep(pcm, events)
        if not events:
            self.conversation.hear_quiet(self.clock())  # no action, no earlier deadline
            return
        if events & _SPEECH_END:
            self.turn_ended_at = self.clock()
        self._feed(voice.CallerAudio(bool(events & _SPEECH_START), bool(events & _SPEECH_END),
                               bool(events & _BARGE_IN)))

    def _keep(self, audio: bytes, events: int) -> None:
        """Keep caller audio: for the turn being captured; else in the pre-roll ring,
        and from the onset of any speech the detector reports."""
        if self.turn_audio is not None:
            if len(self.turn_audio) < self.turn_limit:
                self.turn_audio += audio
            return
        preroll = self.preroll
        preroll += audio
        excess = len(preroll) - self.preroll_limit
        if excess > 0:
            del preroll[:excess]
        if events & _SPEECH_START:
            keep = self.detector.since_onset * 2 + self.preroll_keep
            self.speech_audio = preroll[-keep:]
        elif self.speech_audio is not None and len(self.speech_audio) < self.turn_limit:
            self.speech_audio += audio
        if events & _SPEECH_END:
            self.speech_audio = None

    def _caller_key(self, key: str) -> None:
        entry = self.keys.press(key, self.clock())
        if entry is not None:
            self._entry(entry)
        else:
            self._check_timer()  # the entry ends by itself after a pause

    def _entry(self, text: str) -> None:
        if self.ended.is_set():
            return
        self.turn_ended_at = self.clock()
        self.entries.append(text)
        self._carry_out([])  # answered now when the conversation listens

    # -- recording

    def _frame_sent(self, utterance: int, frame: bytes) -> None:
        self.detector.played(rms(frame))  # what may come back as echo
        if utterance != self.playing and utterance not in self.muted:
            self.playing = utterance  # told once, at the first frame of each utterance
            self.first_audio_at.setdefault(utterance, self.clock())
            self._feed(voice.SpeechPlaying(utterance))
        if self.recorder is not None and len(self.line_pending) < MAX_RECORDING_LAG_BYTES:
            self.line_pending += frame

    def _record(self, caller: bytes) -> None:
        assert self.recorder is not None
        line = bytes(self.line_pending[:len(caller)])
        del self.line_pending[:len(caller)]
        try:
            self.recorder.write(caller, line)
        except Exception:
            self._recording_failed()

    def _recording_failed(self) -> None:
        # spec: "Recording" — a failed write marks the call and the call continues.
        log.exception("recording failed; the call goes on without it")
        self.recorder = None
        if self.tasks is not None:
            self.tasks.start_soon(_letting_go, self._mark_recording_failed)

    async def _mark_recording_failed(self) -> None:
        if self.on_recording_failed is None:
            return
        try:
            await self.on_recording_failed()
        except Exception:
            log.exception("the call could not be marked recording_failed")

    async def _close_recorder(self) -> None:
        # spec: "Recording" — it ends where the service's side of the call ends.
        recorder, self.recorder = self.recorder, None
        if recorder is None:
            return
        try:
            recorder.close()
        except Exception:
            log.exception("the recording could not be finished")
            await self._mark_recording_failed()

    # -- actions

    def _speak(self, action: voice.Speak) -> None:
        assert self.tasks is not None
        self.tasks.start_soon(_letting_go, self._say_opening, action.text)

    def _capture(self, action: voice.CaptureTurn) -> None:
        speech, self.speech_audio = self.speech_audio, None
        self.turn_audio = speech if speech is not None else self.preroll
        self.preroll = bytearray()

    def _drop(self, action: voice.DropTurn | None = None) -> None:
        self.turn_audio = None

    def _recognise(self, action: voice.Recognise) -> None:
        assert self.tasks is not None
        audio = bytes(self.turn_audio or b"")
        self.tasks.start_soon(_letting_go, self._transcribe, action.request, audio)

    def _judge(self, action: voice.JudgeTurn) -> None:
        assert self.tasks is not None
        self.tasks.start_soon(_letting_go, self._ask_detector, action.request, action.transcript)

    def _respond(self, action: voice.Respond) -> None:
        assert self.tasks is not None
        self._drop()
        self.last_answer = action.utterance
        heard, self.turn_ended_at = self.turn_ended_at, None
        self.tasks.start_soon(_letting_go, self._answer, action.utterance, action.transcript,
                              self.clock() if heard is None else heard)

    def _stop_speaking(self, action: voice.StopSpeaking) -> None:
        assert self.tasks is not None
        self.muted.add(self.last_answer)
        self.player.stop()
        self.tasks.start_soon(_letting_go, self._stop_playback)

    def _end(self, action: voice.EndCall) -> None:
        self.player.stop()
        self.ended.set()

    # -- work the actions start

    async def _say_opening(self, text: str) -> None:
        # spec: "Opening of every call" — fail-closed: a notice not heard is not said.
        if not await self._synthesise(voice.OPENING_UTTERANCE, text, must_sound=True):
            self._feed(voice.SpeechFailed(voice.OPENING_UTTERANCE))
            return
        await self.player.finished(voice.OPENING_UTTERANCE).wait()
        self._feed(voice.SpeechFinished(voice.OPENING_UTTERANCE))

    async def _synthesise(self, utterance: int, text: str, *, must_sound: bool = False) -> bool:
        """Speak ``text`` into the player; False when synthesis was unavailable, or,
        with ``must_sound``, when all it gave was nothing or silence."""
        synthesiser = self.engines.synthesiser
        rate = synthesiser.sample_rate
        to_line = Resampler(rate, LINE_RATE) if rate != LINE_RATE else None
        framer = Framer()
        sounded = False
        try:
            async with _closing(synthesiser.stream(text)) as chunks:
                async for chunk in chunks:
                    if utterance in self.muted:
                        return True
                    frames = framer.feed(to_line.process(chunk) if to_line else chunk)
                    sounded = sounded or any(rms(frame) >= AUDIBLE_RMS for frame in frames)
                    # Waits while the call's queue is full; False once stopped.
                    if not await self.player.play(utterance, frames):
                        return True
        except Exception:
            log.warning("synthesis unavailable", exc_info=True)
            return False
        last = framer.flush()
        sounded = sounded or (last is not None and rms(last) >= AUDIBLE_RMS)
        if must_sound and not sounded:
            log.warning("synthesis gave no audible sound")
            return False
        if last is not None and utterance not in self.muted:
            await self.player.play(utterance, [last])
        return True

    async def _transcribe(self, request: int, audio: bytes) -> None:
        rate = self.setup.recognition_rate
        if rate != LINE_RATE:
            audio = Resampler(LINE_RATE, rate).process(audio)
        try:
            text = await self.engines.recogniser.transcribe(audio, rate)
        except Exception:
            log.warning("recognition unavailable", exc_info=True)
            self._feed(voice.RecognitionFailed(request))
            return
        self._feed(voice.Transcribed(request, text if isinstance(text, str) else ""))

    async def _ask_detector(self, request: int, transcript: str) -> None:
        detector = self.engines.turn_detector
        assert detector is not None
        # The conversation gives up at the hold ceiling; this only ends the request.
        with anyio.move_on_after(self.setup.dials.hold_seconds + 1.0):
            try:
                probability = float(await detector.end_of_turn(transcript))
            except Exception:
                log.warning("turn detection unavailable; not asked again this call",
                            exc_info=True)
                self._feed(voice.TurnJudgeFailed(request))
                return
            self._feed(voice.TurnJudged(request, probability))

    async def _answer(self, utterance: int, transcript: str, heard: float) -> None:
        # Answers are given one after another: a talked-over answer finishes first.
        async with self.reply_lock:
            asked = self.clock()
            written: list[float] = []  # when the agent's first words came
            sentences_in, sentences_out = anyio.create_memory_object_stream[str](16)
            spoke = True
            async with anyio.create_task_group() as reply:
                reply.start_soon(self._write_answer, transcript, asked - heard, sentences_in,
                                 written)
                async with sentences_out:
                    async for sentence in sentences_out:
                        if spoke and utterance not in self.muted:
                            spoke = await self._synthesise(utterance, sentence)
            if spoke and utterance not in self.muted:  # a talked-over answer has no more
                await self.player.finished(utterance).wait()
            first_audio = self.first_audio_at.pop(utterance, None)
            await self._timed(TurnTimings(
                asked - heard, written[0] - heard if written else None,
                first_audio - heard if first_audio is not None else None,
                self.clock() - heard))
            if not spoke:
                self._feed(voice.SpeechFailed(utterance))
                return
            self._feed(voice.SpeechFinished(utterance, self.agent.ending()))

    async def _timed(self, timings: TurnTimings) -> None:
        try:
            await self.agent.timed(timings)
        except Exception:  # the call goes on without its timings
            log.exception("the timings of a turn could not be kept")

    async def _write_answer(self, transcript: str, waited: float, sentences: Any,
                            written: list[float]) -> None:
        splitter = voice.SentenceSplitter()
        async with sentences:
            try:
                async with _closing(self.agent.answer(transcript, waited)) as pieces:
                    async for piece in pieces:
                        if not written and piece:
                            written.append(self.clock())
                        for sentence in splitter.feed(piece):
                            await sentences.send(sentence)
            except Exception:
                log.exception("the agent failed to answer a turn")
            rest = splitter.flush()
            if rest:
                await sentences.send(rest)


_ACTIONS: dict[type, Callable[[_CallSession, Any], None]] = {
    voice.Speak: _CallSession._speak,
    voice.CaptureTurn: _CallSession._capture,
    voice.DropTurn: _CallSession._drop,
    voice.Recognise: _CallSession._recognise,
    voice.JudgeTurn: _CallSession._judge,
    voice.Respond: _CallSession._respond,
    voice.StopSpeaking: _CallSession._stop_speaking,
    voice.EndCall: _CallSession._end,
}
