"""Frame RMS and the speech/barge-in detector: twins, audioop, and behaviour."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernels import _energy_py
from kernels.energy import VoiceEvent

from .pcm import pcm, samples16


def tone(level: float, milliseconds: int = 20, rate: int = 8000) -> bytes:
    """A frame of a square wave whose RMS is ``level`` of full scale (to 1 LSB)."""
    value = round(level * 32768)
    return pcm([value, -value] * (milliseconds * rate // 2000))


SILENCE = tone(0.0)
SPEECH = tone(0.02)  # above speech (0.012), below barge-in (0.035)
LOUD = tone(0.05)  # above both


@given(st.lists(samples16, max_size=500))
def test_rms_is_the_exact_root_mean_square(energy, samples):
    expected = math.sqrt(sum(s * s for s in samples) / len(samples)) / 32768 if samples else 0.0
    assert energy.rms(pcm(samples)) == expected == _energy_py.rms(pcm(samples))


@given(st.lists(samples16, min_size=1, max_size=500))
def test_rms_reads_at_most_one_unit_above_audioop(energy, audioop, samples):
    # audioop.rms truncates the root to an int
    truncated = audioop.rms(pcm(samples), 2)
    assert truncated <= energy.rms(pcm(samples)) * 32768 < truncated + 1


def test_rms_of_full_scale_is_one(energy):
    assert energy.rms(pcm([-32768] * 160)) == 1.0


def test_rms_of_nothing_is_zero(energy):
    assert energy.rms(b"") == 0.0


def test_odd_byte_count_is_refused(energy):
    with pytest.raises(ValueError, match="even number of bytes, got 5"):
        energy.rms(b"\x00" * 5)
    with pytest.raises(ValueError, match="even number of bytes"):
        energy.Detector().update(b"\x00")


def test_events_are_the_shared_flags():
    assert [event.value for event in VoiceEvent] == [1, 2, 4]


def feed(detector, frames):
    return [detector.update(frame) for frame in frames]


def test_speech_starts_once_loud_frames_last_the_minimum(energy):
    detector = energy.Detector(min_speech_ms=60)
    events = feed(detector, [SPEECH] * 4)
    assert events == [0, 0, VoiceEvent.SPEECH_START, 0]
    assert detector.speaking


def test_a_quiet_frame_restarts_the_count_towards_speech(energy):
    detector = energy.Detector(min_speech_ms=60)
    assert feed(detector, [SPEECH, SPEECH, SILENCE, SPEECH, SPEECH]) == [0] * 5
    assert not detector.speaking


def test_speech_ends_after_the_silence_threshold(energy):
    detector = energy.Detector(min_speech_ms=0, silence_threshold_ms=100)
    assert feed(detector, [SPEECH]) == [VoiceEvent.SPEECH_START]
    events = feed(detector, [SILENCE] * 5)
    assert events == [0, 0, 0, 0, VoiceEvent.SPEECH_END]
    assert not detector.speaking


def test_speech_resumed_within_the_silence_threshold_does_not_end(energy):
    detector = energy.Detector(min_speech_ms=0, silence_threshold_ms=100)
    assert feed(detector, [SPEECH] + [SILENCE] * 4 + [SPEECH] + [SILENCE] * 4) == [1] + [0] * 9


def test_barge_in_is_reported_once_per_loud_run(energy):
    detector = energy.Detector(min_speech_ms=1000, barge_min_ms=60)
    assert feed(detector, [LOUD] * 6) == [0, 0, VoiceEvent.BARGE_IN, 0, 0, 0]
    assert feed(detector, [SPEECH] + [LOUD] * 3) == [0, 0, 0, VoiceEvent.BARGE_IN]


def test_one_frame_can_carry_several_events(energy):
    detector = energy.Detector(min_speech_ms=40, barge_min_ms=40)
    assert feed(detector, [tone(0.05, 40)]) == [VoiceEvent.SPEECH_START | VoiceEvent.BARGE_IN]


def test_durations_count_samples_across_frame_lengths(energy):
    detector = energy.Detector(min_speech_ms=25)
    assert feed(detector, [tone(0.02, 10), tone(0.02, 10), tone(0.02, 5)]) == [0, 0, 1]


def test_an_empty_frame_changes_nothing(energy):
    detector = energy.Detector(min_speech_ms=40)
    assert feed(detector, [SPEECH, b"", SPEECH]) == [0, 0, VoiceEvent.SPEECH_START]
    assert detector.level == pytest.approx(0.02, abs=1 / 32768)


def test_reset_returns_to_silence(energy):
    detector = energy.Detector(min_speech_ms=0)
    feed(detector, [LOUD])
    detector.reset()
    assert (detector.speaking, detector.level) == (False, 0.0)
    assert feed(detector, [SPEECH]) == [VoiceEvent.SPEECH_START]


def test_bad_configuration_is_refused(energy):
    with pytest.raises(ValueError, match="sample_rate must be positive"):
        energy.Detector(0)
    with pytest.raises(ValueError, match="barge_min_ms must not be negative"):
        energy.Detector(barge_min_ms=-1)


# Frames of 10 and 20 ms among odd lengths, so that runs often end exactly on a duration.
frame_lengths = st.one_of(st.sampled_from([80, 160]), st.integers(0, 200))
frames = st.lists(
    st.tuples(frame_lengths, st.sampled_from([0, 200, 400, 1200, 2000, 32767])),
    max_size=60,
)


# The twin states the rules in its own words (one count of the samples against the
# present state), so agreement here is two formulations agreeing, down to durations of
# zero; no durations at all compares the two sets of defaults.
milliseconds = st.one_of(st.sampled_from([0, 10, 20, 40, 60]), st.integers(0, 80))
durations = st.one_of(st.just({}), st.fixed_dictionaries({
    "min_speech_ms": milliseconds,
    "silence_threshold_ms": milliseconds,
    "barge_min_ms": milliseconds,
}))


@given(frames, durations)
def test_twins_detect_alike(energy, frame_specs, settings):
    ours, reference = energy.Detector(**settings), _energy_py.Detector(**settings)
    for length, amplitude in frame_specs:
        frame = pcm([amplitude if i % 2 else -amplitude for i in range(length)])
        assert ours.update(frame) == reference.update(frame)
        assert (ours.speaking, ours.level) == (reference.speaking, reference.level)


@given(st.lists(samples16, max_size=500))
def test_zero_crossings_count_sign_changes(energy, samples):
    expected = sum((a < 0) != (b < 0) for a, b in zip(samples, samples[1:]))
    assert energy.zero_crossings(pcm(samples)) == expected == _energy_py.zero_crossings(pcm(samples))


def test_zero_crossings_of_a_square_wave_and_of_nothing(energy):
    assert energy.zero_crossings(tone(0.02)) == 159  # 160 samples alternating
    assert energy.zero_crossings(b"") == energy.zero_crossings(pcm([5])) == 0
    with pytest.raises(ValueError, match="even number of bytes"):
        energy.zero_crossings(b"\x00" * 3)
