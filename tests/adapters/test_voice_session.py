"""The voice session of a call over an in-memory transport with instant fake engines:
the opening, turns, barge-in, the ends of a call, recording (spec: telephony.md
"Opening of every call", "Speech dials for calls", "Recording", "Limits")."""

from __future__ import annotations

import gc

import anyio
import pytest

from adapters.voice.playback import Player
from adapters.voice.session import (
    PREROLL_SECONDS,
    CallSetup,
    _CallSession,
    _letting_go,
    run_call,
)
from adapters.voice.transport import TransportBroken
from core.call_outcome import CallInput
from core.voice import EndCall, PhoneDials
from tests.fakes.voice import (
    SPEECH_MS_PER_CHAR,
    Caller,
    FakeAgent,
    FakeDetector,
    FakeEngines,
    FakeRecogniser,
    FakeRecorder,
    FakeSynthesiser,
    MemoryTransport,
)
from tests.support.speech_signals import Voice, speechlike

pytestmark = pytest.mark.anyio

OPENING = "Hello, this is a test line."
QUICK = PhoneDials(silence_threshold_ms=300, min_speech_ms=100, turn_detection=False,
                   barge_min_ms=100)


def frames_for(text: str) -> int:
    """Frames the fake synthesiser's audio for ``text`` fills at 8 kHz."""
    return -(-len(text) * SPEECH_MS_PER_CHAR // 20)


class Call:
    """One session under test, with its caller and what it was given."""

    def __init__(self, engines: FakeEngines | None = None, agent: FakeAgent | None = None,
                 dials: PhoneDials = QUICK, recorder: FakeRecorder | None = None,
                 rate: int = 16000) -> None:
        self.engines = engines or FakeEngines()
        self.agent = agent or FakeAgent()
        self.transport = MemoryTransport()
        self.caller = Caller(self.transport.to_session.send)
        self.setup = CallSetup(OPENING, dials, rate)
        self.recorder = recorder
        self.recording_failed = 0
        self.ending: EndCall | None = None

    async def _mark_failed(self) -> None:
        self.recording_failed += 1

    async def _record_end(self, ending: EndCall) -> None:
        self.transport.log.append(("recorded", ending.given))

    async def run(self, script) -> EndCall:
        async def session() -> None:
            self.ending = await run_call(self.transport, self.engines, self.agent, self.setup,
                                         recorder=self.recorder,
                                         on_recording_failed=self._mark_failed,
                                         on_end=self._record_end)
            tasks.cancel_scope.cancel()

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(session)
                tasks.start_soon(self.caller.run)
                await script(self)
                await anyio.sleep_forever()
        assert self.ending is not None
        return self.ending

    async def opening_played(self) -> None:
        await self.transport.until(lambda: self.transport.count("end_of_speech") >= 1)

    async def hang_up(self) -> None:
        await anyio.sleep(0.1)
        await self.transport.to_session.aclose()

    async def one_turn(self, seconds: float) -> None:
        """A script: after the opening the caller speaks once, hears the answer out and
        hangs up."""
        await self.opening_played()
        await self.caller.say(seconds)
        await self.transport.until(lambda: self.transport.count("end_of_speech") >= 2)
        await self.hang_up()


async def test_opening_is_heard_whole_and_speech_over_it_is_ignored():
    async def script(call: Call) -> None:
        await call.caller.say(0.5)  # the caller talks over the opening
        await call.opening_played()
        await anyio.sleep(0.5)
        await call.hang_up()

    call = Call()
    ending = await call.run(script)
    assert ending == EndCall(CallInput.CALLER_HUNG_UP, hang_up=False)
    assert call.engines.synthesiser.spoken == [OPENING]
    assert call.transport.count("frame") == frames_for(OPENING)  # every frame of it
    assert call.transport.count("stop") == 0
    assert call.engines.recogniser.heard == []  # neither answered
    assert call.agent.questions == []  # nor acted on


async def test_a_turn_is_recognised_at_the_recognition_rate_answered_and_spoken():
    answer = "We open at nine."
    call = Call(FakeEngines(recogniser=FakeRecogniser(["when do you open"])),
                FakeAgent(answers=[answer]), rate=8000)
    await call.run(lambda call: call.one_turn(0.4))
    assert call.agent.questions == ["when do you open"]
    [(audio_bytes, rate)] = call.engines.recogniser.heard
    assert rate == 8000 and audio_bytes >= 0.4 * 8000 * 2  # the whole turn, from its start
    assert call.engines.synthesiser.spoken == [OPENING, answer]
    assert call.transport.count("frame") == frames_for(OPENING) + frames_for(answer)


async def test_each_answered_turn_is_timed_from_the_end_of_the_callers_speech():
    call = Call(FakeEngines(recogniser=FakeRecogniser(["when do you open"])),
                FakeAgent(answers=["We open at nine."]))
    await call.run(lambda call: call.one_turn(0.4))
    [timings] = call.agent.timings
    # Silence had to last the dials' threshold and the turn be recognised before the
    # agent was asked; the agent is told how long that took, and the steps come in order.
    [waited] = call.agent.waits
    assert waited == timings.asked
    assert 0 <= timings.asked <= timings.first_text <= timings.first_audio <= timings.finished


def voice_call(dbfs: float, **kwargs) -> Call:
    call = Call(**kwargs)
    call.caller = Voice(call.transport.to_session.send, dbfs)
    return call


@pytest.mark.parametrize("dbfs", [None, -32.0], ids=["tone", "voice at -32 dBFS"])
async def test_caller_speaking_over_the_answer_stops_playback_at_once_and_is_kept(dbfs):
    async def script(call: Call) -> None:
        await call.opening_played()
        await call.caller.say(0.3)
        opening_frames = frames_for(OPENING)
        await call.transport.until(lambda: call.transport.count("frame") > opening_frames + 5)
        await call.caller.say(0.8)  # barge in
        await call.transport.until(lambda: call.transport.count("stop") == 1)
        await call.transport.until(lambda: len(call.engines.recogniser.heard) == 2)
        await call.hang_up()

    long_answer = "Our opening hours are long and many, and here they all are in turn."
    agent = FakeAgent(answers=[long_answer, "Sure."])
    call = voice_call(dbfs, agent=agent) if dbfs is not None else Call(agent=agent)
    await call.run(script)
    frames = [kind for kind, _ in call.transport.log if kind in ("frame", "stop")]
    stopped_at = frames.index("stop")
    assert stopped_at < frames_for(OPENING) + frames_for(long_answer)
    # The agent finished the answer it was giving (for the transcript), unspoken.
    assert long_answer in call.agent.finished
    assert call.agent.questions[1] == "hello"  # the barge-in became the next turn
    # All of what was said over the agent, from its onset, and the pause after it;
    # the pre-roll before it is the line since the answer began (the first turn's
    # audio went with the first turn).
    (_, _), (kept, rate) = call.engines.recogniser.heard
    assert kept >= (0.8 + QUICK.pause_seconds - 0.04) * rate * 2


async def test_a_turn_whose_first_syllables_were_too_short_to_start_it_is_kept_from_them():
    # Three 40 ms syllables 150 ms apart before the word: the detector dates the
    # onset back to the first, and the recogniser gets the turn from the pre-roll
    # before it — more than the onset run and pre-roll alone would keep.
    lead = (speechlike(0.04, -30, seed=7) + bytes(int(0.11 * 8000) * 2)) * 3
    word = speechlike(0.6, -30, seed=8)

    async def script(call: Call) -> None:
        await call.opening_played()
        await anyio.sleep(0.6)  # the pre-roll fills with the quiet line
        call.caller._speech = lead + word + bytes(640)
        await call.caller.say(len(lead + word) / 16000)
        await call.transport.until(lambda: len(call.engines.recogniser.heard) == 1)
        await call.hang_up()

    call = voice_call(-30.0)
    await call.run(script)
    [(kept, rate)] = call.engines.recogniser.heard
    spoken = len(lead + word) / 16000
    # Allow two frames for pacing at each end.
    assert kept >= (PREROLL_SECONDS + spoken + QUICK.pause_seconds - 0.08) * rate * 2


async def test_a_peer_that_goes_silent_for_five_seconds_is_given_up_on():
    async def script(call: Call) -> None:
        await call.opening_played()
        call.caller.silent = True

    call = Call()
    ending = await call.run(script)
    assert ending == EndCall(CallInput.MEDIA_LOST, hang_up=True)
    assert call.transport.log[-1][0] == "hang_up"


async def test_opening_that_cannot_be_synthesised_ends_the_call_notice_failed():
    async def script(call: Call) -> None:
        pass

    call = Call(FakeEngines(synthesiser=FakeSynthesiser(down=True)))
    ending = await call.run(script)
    assert ending == EndCall(CallInput.NOTICE_UNAVAILABLE, hang_up=True)
    assert call.transport.count("frame") == 0
    assert call.transport.log[-1][0] == "hang_up"


async def test_opening_cut_off_half_way_is_a_failed_notice_too():
    call = Call(FakeEngines(synthesiser=FakeSynthesiser(fail_after_chunks=1)))
    ending = await call.run(lambda call: anyio.sleep(0))
    assert ending.given is CallInput.NOTICE_UNAVAILABLE


async def test_a_failing_recorder_marks_the_call_and_the_call_goes_on():
    call = Call(recorder=FakeRecorder(fail_after=10))
    ending = await call.run(lambda call: call.one_turn(0.3))
    assert call.recording_failed == 1
    assert call.agent.questions == ["hello"]  # the conversation carried on
    assert ending.given is CallInput.CALLER_HUNG_UP


async def test_recording_gets_both_sides_and_ends_with_the_call():
    async def script(call: Call) -> None:
        await call.opening_played()
        await anyio.sleep(0.2)
        await call.hang_up()

    recorder = FakeRecorder()
    call = Call(recorder=recorder)
    await call.run(script)
    assert recorder.closed and call.recording_failed == 0
    assert recorder.caller_bytes > 0
    assert recorder.line_bytes > 0


async def test_the_agent_putting_the_caller_through_ends_our_side_after_its_answer():
    async def script(call: Call) -> None:
        await call.opening_played()
        await call.caller.say(0.3)

    call = Call(agent=FakeAgent(answers=["Putting you through."],
                                endings=[CallInput.TRANSFERRED]))
    ending = await call.run(script)
    assert ending == EndCall(CallInput.TRANSFERRED, hang_up=True)
    kinds = [kind for kind, _ in call.transport.log]
    assert kinds.count("end_of_speech") == 2
    # The transfer is on record before our side hangs up, so the telephone system's
    # next question already finds it.
    assert call.transport.log[-2:] == [("recorded", CallInput.TRANSFERRED), ("hang_up", None)]


async def press(call: Call, keys: str) -> None:
    for key in keys:
        await call.transport.to_session.send(key)
        await anyio.sleep(0.05)


async def test_keys_up_to_hash_reach_the_agent_as_a_turn():
    async def script(call: Call) -> None:
        await call.opening_played()
        await press(call, "1234#")
        await call.transport.until(lambda: call.transport.count("end_of_speech") >= 2)
        await call.hang_up()

    call = Call(agent=FakeAgent(answers=["Thank you, I have your reference."]))
    await call.run(script)
    assert call.agent.questions == ["Digits pressed: 1234"]
    assert call.engines.recogniser.heard == []  # keys are not speech


async def test_keys_pressed_over_the_opening_end_with_a_pause_and_are_answered_after_it():
    async def script(call: Call) -> None:
        await press(call, "7*")  # during the opening
        await call.opening_played()
        await call.transport.until(lambda: call.transport.count("end_of_speech") >= 2)
        await call.hang_up()

    call = Call(agent=FakeAgent(answers=["Option seven."]))
    await call.run(script)
    assert call.agent.questions == ["Digits pressed: 7*"]


async def test_a_failing_turn_detector_is_asked_once_per_call():
    async def script(call: Call) -> None:
        await call.opening_played()
        for turn in (1, 2):
            await call.caller.say(0.3)
            await call.transport.until(
                lambda: call.transport.count("end_of_speech") >= 1 + turn)
        await call.hang_up()

    dials = PhoneDials(silence_threshold_ms=300, min_speech_ms=100, turn_detection=True)
    detector = FakeDetector(down=True)
    call = Call(FakeEngines(turn_detector=detector), dials=dials)
    await call.run(script)
    assert len(call.agent.questions) == 2
    assert detector.asked == ["hello"]


async def test_an_ended_call_goes_at_once_without_waiting_for_the_garbage_collector():
    """Its tasks' cancellations and the player's listener would otherwise keep the
    whole call in reference cycles until a full collection."""
    async def script(call: Call) -> None:
        await call.opening_played()
        await call.caller.say(0.5)  # a turn in flight as the call ends
        await call.hang_up()

    def calls_alive() -> list[str]:
        return [type(held).__name__ for held in gc.get_objects()
                if type(held) in (_CallSession, Player)]

    def cycles_left_by_the_call() -> list[str]:
        """What a full collection now finds of the session's code: ended tasks'
        exceptions whose tracebacks pass through it."""
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            found = [type(held).__name__ for held in gc.garbage
                     if isinstance(held, BaseException) and _passes_through_session(held)]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
        return found

    gc.collect()
    assert calls_alive() == []
    gc.disable()
    try:
        await Call().run(script)
        assert calls_alive() == []
        assert cycles_left_by_the_call() == []
    finally:
        gc.enable()


def _passes_through_session(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith("adapters/voice/session.py"):
            return True
        tb = tb.tb_next
    return False


async def test_a_calls_task_ends_quietly_only_when_the_call_is_over():
    """Cancelled by its task group (the call's end) it just ends; cancelled otherwise
    (a future it awaited was cancelled by someone else) the cancellation goes on, so
    the task group ends the call."""
    cancelled = anyio.get_cancelled_exc_class()

    async def cancelled_by_someone_else() -> None:
        raise cancelled()

    with pytest.raises(cancelled):
        await _letting_go(cancelled_by_someone_else)

    finished = []

    async def waits_for_the_call() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            finished.append(True)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_letting_go, waits_for_the_call)
        await anyio.sleep(0.01)
        tasks.cancel_scope.cancel()
    assert finished == [True]


async def test_a_broken_connection_is_dropped():
    async def script(call: Call) -> None:
        await call.opening_played()
        await call.transport.to_session.send(TransportBroken("reset"))

    ending = await Call().run(script)
    assert ending == EndCall(CallInput.MEDIA_LOST, hang_up=False)
