"""The speech detector on line-like signals: quiet and short speech starts a turn from
its first frame, noise and the agent's echo do not, speech over the agent barges in."""

from __future__ import annotations

import numpy as np
import pytest

from core.voice import ONSET_LOOKBACK_MS, Heard, PhoneDials, SpeechDetector
from kernels.energy import rms, zero_crossings
from tests.support.speech_signals import noise, speechlike

RATE = 8000
FRAME = 320  # bytes: 20 ms at 8 kHz
DIALS = PhoneDials()


def mix(*parts: bytes) -> bytes:
    """Samples added up; the result is as long as the longest part."""
    arrays = [np.frombuffer(part, "<i2").astype(np.int32) for part in parts]
    total = np.zeros(max(len(a) for a in arrays), np.int32)
    for array in arrays:
        total[:len(array)] += array
    return np.clip(total, -32768, 32767).astype("<i2").tobytes()


def quiet(seconds: float) -> bytes:
    return bytes(int(seconds * RATE) * 2)


def hear(audio: bytes, played: bytes | None = None, dials: PhoneDials = DIALS):
    """Feed ``audio`` frame by frame; [(frame index, bits, since_onset)] for each event."""
    detector = SpeechDetector(dials, RATE)
    events = []
    for index in range(len(audio) // FRAME):
        if played is not None and index * FRAME < len(played):
            detector.played(rms(played[index * FRAME:(index + 1) * FRAME]))
        frame = audio[index * FRAME:(index + 1) * FRAME]
        bits = detector.hear(rms(frame), zero_crossings(frame), len(frame) // 2)
        if bits:
            events.append((index, bits, detector.since_onset))
    return events


def starts(events) -> list:
    return [event for event in events if event[1] & Heard.SPEECH_START]


@pytest.mark.parametrize("level", [-44.0, -32.0, -12.0])
def test_a_short_answer_starts_a_turn_from_its_first_frame(level):
    line = noise("white", 3.0, level - 20)  # SNR 20 dB
    audio = mix(line, quiet(1.0) + speechlike(0.25, level, seed=3))
    [(index, bits, since_onset)] = starts(hear(audio))
    onset_frame = 50  # the speech begins at 1.0 s
    assert bits == Heard.SPEECH_START
    # The first frame counted as speech is within 60 ms of the onset: the session's
    # 300 ms pre-roll before it reaches well back past the onset.
    assert (index + 1) * 160 - since_onset <= (onset_frame + 3) * 160
    assert index - onset_frame <= 6  # within 120 ms of it


def test_speech_ends_after_the_configured_pause():
    audio = mix(noise("white", 4.0, -60), quiet(0.5) + speechlike(1.0, -30, seed=4))
    events = hear(audio)
    assert [bits for _, bits, _ in events] == [Heard.SPEECH_START, Heard.SPEECH_END]
    ended_at = events[1][0] + 1
    pause = DIALS.silence_threshold_ms // 20
    assert 75 + pause - 2 <= ended_at <= 75 + pause + 5  # speech ends at frame 75


@pytest.mark.parametrize("kind, level", [("white", -36.0), ("white", -22.0), ("hum", -26.0)])
def test_noise_alone_never_starts_a_turn(kind, level):
    # Noise from the first frame, and noise that starts on a quiet line.
    assert starts(hear(noise(kind, 20.0, level))) == []
    assert len(starts(hear(quiet(1.0) + noise(kind, 10.0, level)))) <= (kind == "white")


def test_speech_over_stationary_noise_at_10_db_snr_starts():
    audio = mix(noise("white", 4.0, -36), quiet(2.0) + speechlike(0.4, -26, seed=5))
    assert len(starts(hear(audio))) == 1


def agent_and_echo(seconds: float) -> tuple[bytes, bytes]:
    """The agent's speech at −18 dBFS, and its echo 20 dB down and 40 ms late."""
    played = speechlike(seconds, -18, seed=9)
    samples = np.frombuffer(played, "<i2").astype(np.float64) * 0.1
    echo = np.concatenate([np.zeros(320), samples[:-320]])
    return played, np.round(echo).astype("<i2").tobytes()


def test_the_agents_echo_is_not_a_barge_in():
    played, echo = agent_and_echo(20.0)
    assert hear(mix(echo, noise("white", 20.0, -65)), played) == []


def test_speech_over_the_agent_barges_in_within_300_ms():
    played, echo = agent_and_echo(6.0)
    caller = quiet(2.0) + speechlike(1.0, -32, seed=6)
    [(index, bits, since_onset)] = starts(hear(mix(echo, caller), played))
    assert bits == Heard.SPEECH_START | Heard.BARGE_IN
    assert 0 <= index + 1 - 100 <= 15
    assert (index + 1) * 160 - since_onset <= (100 + 3) * 160


def test_durations_count_samples_and_bad_rates_are_refused():
    detector = SpeechDetector(DIALS, RATE)
    assert detector.hear(0.5, 100, 0) == 0  # no time passed
    with pytest.raises(ValueError, match="sample_rate must be positive"):
        SpeechDetector(DIALS, 0)


def test_the_dials_are_floors_under_the_rules():
    quiet_speech = mix(noise("white", 3.0, -70), quiet(1.0) + speechlike(0.8, -32, seed=3))
    assert len(starts(hear(quiet_speech))) == 1
    # Below speech_rms nothing is speech, however far above the line's noise.
    assert starts(hear(quiet_speech, dials=PhoneDials(speech_rms=0.05))) == []
    # Over the agent, speech below barge_rms does not barge in.
    played, echo = agent_and_echo(6.0)
    over_agent = mix(echo, quiet(2.0) + speechlike(1.0, -32, seed=6))
    assert len(starts(hear(over_agent, played))) == 1
    assert starts(hear(over_agent, played, PhoneDials(barge_rms=0.05))) == []


def test_a_line_that_opens_with_a_quiet_frame_learns_its_floor_from_what_follows():
    # The first frame (a resampler starting, a line settling) is silent; the steady
    # noise after it is the line, not speech.
    assert starts(hear(quiet(0.02) + noise("white", 6.0, -40))) == []


def test_syllables_too_short_to_start_speech_alone_date_its_onset_back():
    # Three 40 ms syllables 150 ms apart, then the word: speech starts on the word,
    # dated from the first short syllable (within the lookback).
    blip = speechlike(0.04, -30, seed=7)
    lead = quiet(1.0) + (blip + quiet(0.11)) * 3
    audio = mix(noise("white", 4.0, -60), lead + speechlike(0.6, -30, seed=8))
    [(index, _, since_onset)] = starts(hear(audio))
    first_syllable = 50  # frame index at 1.0 s
    assert (index + 1) * 160 - since_onset <= first_syllable * 160
    assert since_onset <= (ONSET_LOOKBACK_MS + 200) * RATE // 1000


def echo_of(played: bytes, delay_ms: int, loss_db: float = 20.0) -> bytes:
    samples = np.frombuffer(played, "<i2").astype(np.float64) * 10 ** (-loss_db / 20)
    delay = delay_ms * RATE // 1000
    echo = np.concatenate([np.zeros(delay), samples[:-delay]])
    return np.round(echo).astype("<i2").tobytes()


@pytest.mark.parametrize("delay_ms, lag", [(40, 2), (100, 5)])
def test_the_lines_echo_delay_is_learnt_and_a_late_echo_is_not_a_barge_in(delay_ms, lag):
    played = speechlike(20.0, -18, seed=9)
    heard = mix(echo_of(played, delay_ms), noise("white", 20.0, -65))
    detector = SpeechDetector(DIALS, RATE)
    bits = []
    for index in range(len(heard) // FRAME):
        detector.played(rms(played[index * FRAME:(index + 1) * FRAME]))
        frame = heard[index * FRAME:(index + 1) * FRAME]
        bits.append(detector.hear(rms(frame), zero_crossings(frame), FRAME // 2))
    assert detector.echo_delay_frames == lag
    assert not any(bits)


def test_speech_over_the_agent_is_judged_against_the_echo_coming_back_not_the_next_syllable():
    # The agent loud in 60 ms bursts every 120 ms; its echo 40 ms late. A caller
    # quieter than the agent's bursts less the echo loss, but well above their echo,
    # is heard once the delay is learnt: a burst still to come back is not its echo.
    burst = np.frombuffer(speechlike(0.06, -12, seed=11), "<i2")
    pattern = np.concatenate([burst, np.zeros(480, "<i2")])
    played = np.tile(pattern, 50).astype("<i2").tobytes()
    echo = mix(echo_of(played, 40), noise("white", 6.0, -65))
    caller = quiet(3.0) + speechlike(1.5, -33, seed=12)
    [(index, _, _)] = starts(hear(mix(echo, caller), played))
    # Within 160 ms of the caller's onset at 3.0 s (judged against the whole window
    # of the last 80 ms played, it took 220 ms).
    assert 0 <= index + 1 - 150 <= 8
