"""The conversation of a call, fed its inputs (spec: telephony.md "Opening of every
call", "Speech dials for calls", "Limits")."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.call_outcome import CallInput
from core.voice import (
    MAX_TURN_SECONDS,
    PEER_SILENCE_SECONDS,
    CallConversation,
    CallerAudio,
    CallerHungUp,
    CaptureTurn,
    ConnectionLost,
    DropTurn,
    EndCall,
    JudgeTurn,
    KeysPressed,
    Phase,
    PhoneDials,
    Recognise,
    RecognitionFailed,
    Respond,
    Speak,
    SpeechFailed,
    SpeechFinished,
    SpeechPlaying,
    StopSpeaking,
    Transcribed,
    TurnJudgeFailed,
    TurnJudged,
)

QUIET, START, END, BARGE = (CallerAudio(), CallerAudio(speech_started=True),
                            CallerAudio(speech_ended=True), CallerAudio(barge_in=True))
NO_DETECTOR = PhoneDials(turn_detection=False)
DIALS = PhoneDials()  # pause 0.9 s, so the hold is 3.6 s


def opened(dials: PhoneDials = NO_DETECTOR) -> CallConversation:
    """A conversation whose opening has just finished, at t = 1."""
    call = CallConversation("Hello.", dials)
    assert call.start(0.0) == [Speak(0, "Hello.")]
    assert call.handle(SpeechFinished(0), 1.0) == []
    assert call.phase is Phase.LISTENING
    return call


def spoken_turn(call: CallConversation, at: float) -> Recognise:
    """The caller speaks from ``at`` and pauses; returns the recognition asked for."""
    [capture] = call.handle(START, at)
    assert isinstance(capture, CaptureTurn)
    [recognise] = call.handle(END, at + 1.0)
    assert isinstance(recognise, Recognise)
    return recognise


# -- the opening


def test_speech_over_the_opening_is_neither_answered_nor_acted_on():
    call = CallConversation("Hello.", NO_DETECTOR)
    call.start(0.0)
    for at, frame in ((0.2, START), (0.5, BARGE), (0.9, END)):
        assert call.handle(frame, at) == []
    assert call.phase is Phase.OPENING
    assert call.handle(SpeechFinished(0), 1.0) == []
    assert call.phase is Phase.LISTENING


def test_speech_that_runs_past_the_end_of_the_opening_is_not_a_turn():
    call = CallConversation("Hello.", NO_DETECTOR)
    call.start(0.0)
    call.handle(START, 0.5)
    call.handle(SpeechFinished(0), 1.0)
    assert call.handle(END, 1.5) == []
    assert call.phase is Phase.LISTENING


def test_opening_that_cannot_be_synthesised_ends_the_call_notice_failed():
    call = CallConversation("Hello.", NO_DETECTOR)
    call.start(0.0)
    assert call.handle(SpeechFailed(0), 0.1) == [EndCall(CallInput.NOTICE_UNAVAILABLE, True)]
    assert call.phase is Phase.ENDED
    assert call.handle(START, 0.2) == []


# -- turns without the detector


def test_a_turn_is_recognised_after_the_pause_and_answered():
    call = opened()
    recognise = spoken_turn(call, 2.0)
    assert recognise.turn == 1
    assert call.handle(Transcribed(recognise.request, "  opening   hours? "), 2.5) == [
        Respond(1, "opening hours?")]
    assert call.phase is Phase.REPLYING
    assert call.handle(SpeechFinished(1), 5.0) == []
    assert call.phase is Phase.LISTENING


def test_nothing_heard_drops_the_turn():
    call = opened()
    recognise = spoken_turn(call, 2.0)
    assert call.handle(Transcribed(recognise.request, " "), 2.5) == [DropTurn(1)]
    assert call.phase is Phase.LISTENING


def test_recognition_unavailable_drops_the_turn_and_the_call_goes_on():
    call = opened()
    recognise = spoken_turn(call, 2.0)
    assert call.handle(RecognitionFailed(recognise.request), 2.5) == [DropTurn(1)]
    assert call.phase is Phase.LISTENING


def test_caller_going_on_while_recognised_continues_the_same_turn():
    call = opened()
    first = spoken_turn(call, 2.0)
    assert call.handle(START, 3.2) == []
    assert call.phase is Phase.HEARING
    assert call.handle(Transcribed(first.request, "half a"), 3.3) == []  # no longer awaited
    [again] = call.handle(END, 4.0)
    assert again == Recognise(first.request + 1, 1)


def test_a_turn_longer_than_the_limit_is_taken_as_finished():
    call = opened()
    call.handle(START, 2.0)
    for second in range(3, int(2.0 + MAX_TURN_SECONDS)):
        assert call.handle(QUIET, float(second)) == []  # loud frames keep arriving
    assert call.deadline == 2.0 + MAX_TURN_SECONDS
    [recognise] = call.handle_timer(2.0 + MAX_TURN_SECONDS)
    assert isinstance(recognise, Recognise)


# -- barge-in


def replying(call: CallConversation) -> None:
    recognise = spoken_turn(call, 2.0)
    call.handle(Transcribed(recognise.request, "hours?"), 3.1)


def test_barge_in_during_playback_stops_it_at_once_and_starts_a_turn():
    call = opened()
    replying(call)
    call.handle(SpeechPlaying(1), 3.5)
    assert call.handle(BARGE, 4.0) == [StopSpeaking(), CaptureTurn(2)]
    assert call.phase is Phase.HEARING


def test_barge_in_before_any_answer_plays_is_not_acted_on():
    call = opened()
    replying(call)
    assert call.handle(BARGE, 3.2) == []
    assert call.phase is Phase.REPLYING


def test_an_answer_talked_over_still_ends_the_call_when_the_agent_decided_so():
    call = opened()
    replying(call)
    call.handle(SpeechPlaying(1), 3.5)
    call.handle(BARGE, 4.0)
    assert call.handle(SpeechFinished(1, CallInput.TRANSFERRED), 4.5) == [
        EndCall(CallInput.TRANSFERRED, True)]


def test_agent_ending_the_call_hangs_up_after_its_answer():
    call = opened()
    replying(call)
    assert call.handle(SpeechFinished(1, CallInput.SERVICE_HUNG_UP), 6.0) == [
        EndCall(CallInput.SERVICE_HUNG_UP, True)]


def test_synthesis_lost_mid_call_ends_it():
    call = opened()
    replying(call)
    assert call.handle(SpeechFailed(1), 3.3) == [EndCall(CallInput.SERVICE_HUNG_UP, True)]


# -- the turn detector


def test_detector_sure_the_caller_finished_answers_at_once():
    call = opened(DIALS)
    recognise = spoken_turn(call, 2.0)
    [judge] = call.handle(Transcribed(recognise.request, "what time"), 3.2)
    assert judge == JudgeTurn(recognise.request + 1, "what time")
    assert call.handle(TurnJudged(judge.request, 0.9), 3.3) == [Respond(1, "what time")]


def test_detector_holds_the_turn_until_the_caller_goes_on():
    call = opened(DIALS)
    recognise = spoken_turn(call, 2.0)
    [judge] = call.handle(Transcribed(recognise.request, "I would like"), 3.2)
    assert call.handle(TurnJudged(judge.request, 0.1), 3.3) == []
    assert call.phase is Phase.HOLDING
    call.handle(START, 3.8)
    assert call.phase is Phase.HEARING


def test_no_turn_is_held_longer_than_four_times_the_pause():
    call = opened(DIALS)
    recognise = spoken_turn(call, 2.0)  # quiet from 3.0 - 0.9 = 2.1
    [judge] = call.handle(Transcribed(recognise.request, "I would like"), 3.2)
    call.handle(TurnJudged(judge.request, 0.1), 3.3)
    hold_ends = 3.0 - DIALS.pause_seconds + 4 * DIALS.pause_seconds
    assert call.deadline == pytest.approx(hold_ends)
    assert call.handle_timer(hold_ends - 0.01) == []
    assert call.handle_timer(hold_ends) == [Respond(1, "I would like")]
    assert call.detector_usable  # holding is not failing


def test_detector_that_fails_is_not_asked_again_that_call():
    call = opened(DIALS)
    recognise = spoken_turn(call, 2.0)
    [judge] = call.handle(Transcribed(recognise.request, "hours"), 3.2)
    assert call.handle(TurnJudgeFailed(judge.request), 3.3) == [Respond(1, "hours")]
    call.handle(SpeechFinished(1), 5.0)
    second = spoken_turn(call, 6.0)
    assert call.handle(Transcribed(second.request, "thanks"), 7.2) == [Respond(2, "thanks")]


def test_detector_that_times_out_is_not_asked_again_that_call():
    call = opened(DIALS)
    recognise = spoken_turn(call, 2.0)
    [judge] = call.handle(Transcribed(recognise.request, "hours"), 3.2)
    assert call.handle_timer(call.deadline) == [Respond(1, "hours")]
    assert not call.detector_usable
    assert call.handle(TurnJudged(judge.request, 0.9), 6.0) == []  # too late, ignored


# -- the end of a call


def test_five_seconds_without_a_frame_from_the_peer_gives_up():
    call = opened()
    call.handle(QUIET, 2.0)
    assert call.deadline == 2.0 + PEER_SILENCE_SECONDS
    assert call.handle_timer(6.9) == []
    assert call.handle_timer(7.0) == [EndCall(CallInput.MEDIA_LOST, True)]


def test_a_peer_that_never_sent_audio_had_no_media():
    call = CallConversation("Hello.", NO_DETECTOR)
    call.start(0.0)
    assert call.handle_timer(PEER_SILENCE_SECONDS) == [EndCall(CallInput.NO_MEDIA, True)]


def test_peer_hanging_up_or_breaking_ends_the_call_without_our_hangup():
    call = opened()
    assert call.handle(CallerHungUp(), 2.0) == [EndCall(CallInput.CALLER_HUNG_UP, False)]
    other = opened()
    assert other.handle(ConnectionLost(), 2.0) == [EndCall(CallInput.MEDIA_LOST, False)]


# -- keys


def test_a_key_entry_is_answered_as_a_turn_of_its_own():
    call = opened()
    assert call.handle(KeysPressed("Digits pressed: 1234"), 2.0) == [
        Respond(1, "Digits pressed: 1234")]
    assert call.phase is Phase.REPLYING


def test_a_key_entry_while_the_caller_speaks_replaces_that_turn():
    call = opened()
    request = spoken_turn(call, 2.0)
    actions = call.handle(KeysPressed("Digits pressed: 7"), 3.5)
    assert actions == [DropTurn(1), Respond(2, "Digits pressed: 7")]
    assert call.handle(Transcribed(request.request, "hello"), 3.6) == []  # no longer counts


@pytest.mark.parametrize("phase", ["opening", "replying"])
def test_keys_are_not_answered_over_the_opening_or_an_answer(phase):
    call = CallConversation("Hello.", NO_DETECTOR)
    call.start(0.0)
    if phase == "replying":
        call.handle(SpeechFinished(0), 1.0)
        call.handle(KeysPressed("Digits pressed: 1"), 1.5)
    assert call.handle(KeysPressed("Digits pressed: 2"), 2.0) == []


# -- any sequence of inputs

@st.composite
def inputs(draw):
    request = draw(st.integers(0, 8))
    utterance = draw(st.integers(0, 4))
    return draw(st.sampled_from([
        QUIET, START, END, BARGE, CallerAudio(True, True, True),
        Transcribed(request, draw(st.sampled_from(["", "hello", " a  b "]))),
        RecognitionFailed(request), TurnJudged(request, draw(st.floats(0, 1))),
        TurnJudgeFailed(request), SpeechPlaying(utterance),
        SpeechFinished(utterance, draw(st.sampled_from(
            [None, CallInput.SERVICE_HUNG_UP, CallInput.TRANSFERRED]))),
        SpeechFailed(utterance), CallerHungUp(), ConnectionLost(), "timer",
        KeysPressed("Digits pressed: 12"),
    ]))


@settings(max_examples=300)
@given(dials=st.builds(PhoneDials, silence_threshold_ms=st.integers(200, 2000),
                       turn_detection=st.booleans()),
       steps=st.lists(st.tuples(inputs(), st.floats(0.0, 3.0)), max_size=60))
def test_any_inputs_keep_the_rules_of_a_call(dials, steps):
    call = CallConversation("Hello.", dials)
    now, opening_done, ended, detector_gone = 0.0, False, False, False
    quiet_since = None
    call.start(now)
    for given_input, step in steps:
        now += step
        was = call.phase
        actions = (call.handle_timer(now) if given_input == "timer"
                   else call.handle(given_input, now))
        if ended:
            assert actions == []  # nothing happens after the end
            continue
        for action in actions:
            if isinstance(action, (CaptureTurn, Recognise, Respond, JudgeTurn, StopSpeaking)):
                # the opening is uninterruptible: no turn before it finished
                assert opening_done and was is not Phase.OPENING
            if isinstance(action, JudgeTurn):
                assert not detector_gone  # a failed detector is never asked again
            if isinstance(action, Recognise):
                quiet_since = now - dials.pause_seconds
        if was is Phase.JUDGING and call.phase is not Phase.JUDGING and not call.detector_usable:
            detector_gone = True
        if isinstance(given_input, SpeechFinished) and given_input.utterance == 0:
            opening_done = opening_done or was is Phase.OPENING
        if call.phase in (Phase.JUDGING, Phase.HOLDING):
            # no turn is held longer than four times the pause
            assert call.deadline <= quiet_since + 4 * dials.pause_seconds + 1e-9
        if call.phase is not Phase.ENDED:
            assert call.deadline is not None
        ends = [a for a in actions if isinstance(a, EndCall)]
        assert len(ends) <= 1
        if ends:
            ended = True
            assert call.phase is Phase.ENDED and call.ending == ends[0]


@settings(max_examples=200)
@given(steps=st.lists(st.tuples(inputs(), st.floats(0.0, 3.0)), max_size=40),
       later=st.floats(0.0, 3.0))
def test_hearing_quiet_is_quiet_audio_handled_in_any_phase(steps, later):
    call = CallConversation("Hello.", PhoneDials())
    now = 0.0
    call.start(now)
    for given_input, step in steps:
        now += step
        if given_input == "timer":
            call.handle_timer(now)
        else:
            call.handle(given_input, now)
    handled = copy.deepcopy(call)
    deadline = call.deadline
    assert handled.handle(QUIET, now + later) == []
    call.hear_quiet(now + later)
    assert vars(call) == vars(handled)
    if deadline is not None:
        assert call.deadline >= deadline  # it only moves later


def test_speech_starting_between_sentences_of_the_answer_is_a_barge_in():
    call = opened()
    replying(call)
    call.handle(SpeechPlaying(1), 3.5)
    assert call.handle(START, 4.0) == [StopSpeaking(), CaptureTurn(2)]


def test_speech_begun_before_the_answer_played_and_still_going_is_the_next_turn():
    call = opened()
    replying(call)
    assert call.handle(START, 3.2) == []  # the answer is still being written
    call.handle(SpeechPlaying(1), 3.5)
    assert call.handle(SpeechFinished(1), 4.0) == [CaptureTurn(2)]
    assert call.phase is Phase.HEARING


def test_speech_that_ended_before_the_answer_finished_is_not_a_turn():
    call = opened()
    replying(call)
    call.handle(START, 3.2)
    call.handle(END, 3.4)
    assert call.handle(SpeechFinished(1), 4.0) == []
    assert call.phase is Phase.LISTENING
