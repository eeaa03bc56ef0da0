"""The streaming resampler: twins alike, chunking invisible, every frame its share."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels import _resample_py
from kernels._resample_spec import filter_taps

from .pcm import pcm, samples16, values

CONVERSIONS = [(8000, 16000), (16000, 8000), (24000, 16000), (24000, 8000), (22050, 16000)]
conversions = st.sampled_from(CONVERSIONS)


def chunked(resampler, data: bytes, sizes) -> list[bytes]:
    """Feed ``data`` in chunks of ``sizes`` samples (cycling); return each chunk's output."""
    outputs, start, index = [], 0, 0
    while start < len(data):
        size = sizes[index % len(sizes)] * 2
        outputs.append(resampler.process(data[start : start + size]))
        start, index = start + size, index + 1
    return outputs


@given(conversions, st.lists(samples16, max_size=600))
def test_twins_resample_alike(resample, conversion, samples):
    assert resample.resample(pcm(samples), *conversion) == _resample_py.resample(
        pcm(samples), *conversion
    )


@settings(max_examples=60)
@given(conversions, st.lists(samples16, max_size=900), st.lists(st.integers(0, 170), min_size=1))
def test_chunked_output_equals_one_shot_output(resample, conversion, samples, sizes):
    if not any(sizes):
        sizes = [1]
    data = pcm(samples)
    outputs = chunked(resample.Resampler(*conversion), data, sizes)
    assert b"".join(outputs) == resample.resample(data, *conversion)


@settings(max_examples=30)
@given(conversions, st.lists(st.integers(0, 500), min_size=1, max_size=40))
def test_each_chunk_yields_exactly_its_share(resample, conversion, sizes):
    from_rate, to_rate = conversion
    resampler = resample.Resampler(*conversion)
    fed = produced = 0
    for size in sizes:
        expected = resampler.output_length(size)
        output = resampler.process(bytes(2 * size))
        fed, produced = fed + size, produced + len(output) // 2
        assert len(output) // 2 == expected
        assert produced == math.ceil(fed * to_rate / from_rate)


@pytest.mark.parametrize("from_rate, to_rate", CONVERSIONS)
def test_a_20_ms_frame_always_gives_20_ms(resample, from_rate, to_rate):
    resampler = resample.Resampler(from_rate, to_rate)
    lengths = {len(resampler.process(bytes(from_rate // 25))) for _ in range(10)}
    assert lengths == {to_rate // 25}


def test_ragged_frames_carry_the_fraction_forward(resample):
    resampler = resample.Resampler(24000, 8000)
    assert [len(resampler.process(bytes(2 * 100))) // 2 for _ in range(6)] == [34, 33, 33, 34, 33, 33]


@pytest.mark.parametrize("from_rate, to_rate", CONVERSIONS)
def test_no_click_at_chunk_boundaries(resample, from_rate, to_rate):
    rate = from_rate
    sine = pcm(round(20000 * math.sin(2 * math.pi * 1000 * n / rate)) for n in range(rate // 5))
    sizes = [rate // 50, 1, 37, rate // 100 + 3]
    outputs = [values(chunk) for chunk in chunked(resample.Resampler(from_rate, to_rate), sine, sizes)]
    flat = [sample for chunk in outputs for sample in chunk]
    boundaries, position = set(), 0
    for chunk in outputs[:-1]:
        position += len(chunk)
        boundaries.add(position)
    steps = {n: abs(flat[n] - flat[n - 1]) for n in range(1, len(flat))}
    largest_inside = max(step for n, step in steps.items() if n not in boundaries)
    largest_at_boundary = max(steps[n] for n in boundaries if 0 < n < len(flat))
    assert largest_at_boundary <= largest_inside


def test_reset_starts_afresh(resample):
    noise = pcm((n * 7919) % 65536 - 32768 for n in range(800))
    resampler = resample.Resampler(8000, 16000)
    first = resampler.process(noise)
    resampler.process(noise[:333 * 2])
    resampler.reset()
    assert resampler.process(noise) == first


def loudest_inputs(from_rate: int, to_rate: int) -> list[bytes]:
    """Full scale with each branch's tap signs, then their opposite, each placed
    exactly under an output that branch computes.

    Each drives a branch's sum past what int32 holds in one piece.
    """
    taps = filter_taps(from_rate, to_rate)
    width, down = taps.taps_per_phase, taps.down
    turns = -(-width // down)  # whole turns of `up` outputs that clear one pattern
    inputs = []
    for output in range(taps.up):
        # Output k uses branch k*down % up over the inputs ending at k*down // up;
        # a whole turn of `up` outputs keeps the branch and moves the window `down` on.
        phase = output * down % taps.up
        end = output * down // taps.up
        end += -(-max(0, width - 1 - end) // down) * down
        loudest = [32767 if tap >= 0 else -32768 for tap in taps.phases[phase]]
        gap = [0] * (turns * down - width)
        inputs.append(pcm([0] * (end - width + 1) + loudest + gap + [-s - 1 for s in loudest]))
    return inputs


@pytest.mark.parametrize("from_rate, to_rate", CONVERSIONS)
def test_loudest_input_saturates_instead_of_wrapping(resample, from_rate, to_rate):
    saturated = False
    for data in loudest_inputs(from_rate, to_rate):
        ours = resample.resample(data, from_rate, to_rate)
        assert ours == _resample_py.resample(data, from_rate, to_rate)
        saturated = saturated or {32767, -32768} <= set(values(ours))
    assert saturated


def test_process_into_writes_what_process_returns(resample):
    data = pcm(range(-2000, 2000, 10))  # 400 samples, 800 out
    out = bytearray(b"\xaa" * 1700)
    written = resample.Resampler(8000, 16000).process_into(data, out)
    assert written == 1600
    assert out[:1600] == resample.Resampler(8000, 16000).process(data)
    assert out[1600:] == b"\xaa" * 100


def test_short_output_buffer_is_refused_and_state_kept(resample):
    resampler = resample.Resampler(8000, 16000)
    with pytest.raises(ValueError, match="holds 10 bytes, 640 are needed"):
        resampler.process_into(bytes(320), bytearray(10))
    assert resampler.output_length(160) == 320


def test_empty_frame_gives_nothing_and_changes_nothing(resample):
    resampler = resample.Resampler(24000, 8000)
    resampler.process(bytes(2))
    assert resampler.process(b"") == b""
    assert resampler.output_length(2) == 0 and resampler.output_length(3) == 1


def test_odd_byte_count_is_refused(resample):
    with pytest.raises(ValueError, match="even number of bytes, got 321"):
        resample.Resampler(8000, 16000).process(bytes(321))


def test_unsupported_rates_are_refused(resample):
    with pytest.raises(ValueError, match="no resampler from 44100 Hz to 16000 Hz"):
        resample.Resampler(44100, 16000)


def test_any_bytes_like_object_is_accepted(resample):
    data = pcm(range(0, 3200, 20))
    expected = resample.resample(data, 8000, 16000)
    for view in (bytearray(data), memoryview(data), memoryview(b"x" + data)[1:]):
        assert resample.resample(view, 8000, 16000) == expected
