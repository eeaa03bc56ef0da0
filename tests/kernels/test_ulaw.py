"""G.711 μ-law: both twins against audioop on every input, and against each other."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernels import _ulaw_py

from .pcm import EVERY_SAMPLE, pcm, samples16

EVERY_CODE = bytes(range(256))


def test_encoder_matches_audioop_for_every_sample(ulaw, audioop):
    assert ulaw.lin2ulaw(EVERY_SAMPLE) == audioop.lin2ulaw(EVERY_SAMPLE, 2)


def test_decoder_matches_audioop_for_every_code(ulaw, audioop):
    assert ulaw.ulaw2lin(EVERY_CODE) == audioop.ulaw2lin(EVERY_CODE, 2)


def _g191_compress(sample: int) -> int:
    """ITU-T G.191 ``ulaw_compress`` for one sample (the reference audioop departs from)."""
    magnitude = ((~sample) >> 2) + 33 if sample < 0 else (sample >> 2) + 33
    magnitude = min(magnitude, 0x1FFF)
    segment, rest = 1, magnitude >> 6
    while rest:
        segment, rest = segment + 1, rest >> 1
    code = ((8 - segment) << 4) | (15 - ((magnitude >> segment) & 0xF))
    return code | 0x80 if sample >= 0 else code


def test_encoder_departs_from_g191_only_where_the_docstring_says():
    ours = _ulaw_py.lin2ulaw(EVERY_SAMPLE)
    departures = [
        (sample, code, _g191_compress(sample))
        for sample, code in zip(range(-32768, 32768), ours)
        if code != _g191_compress(sample)
    ]
    assert len(departures) == 508
    assert all(sample < 0 for sample, _, _ in departures)
    # one code step louder (negative codes grow quieter upwards from 0x00)
    assert all(theirs == code + 1 for _, code, theirs in departures)
    assert (departures[0][0], departures[-1][0]) == (-31612, -1)


@given(st.lists(samples16, max_size=700))
def test_twins_encode_alike(ulaw, samples):
    data = pcm(samples)
    assert ulaw.lin2ulaw(data) == _ulaw_py.lin2ulaw(data)


@given(st.binary(max_size=700))
def test_twins_decode_alike(ulaw, codes):
    assert ulaw.ulaw2lin(codes) == _ulaw_py.ulaw2lin(codes)


@given(st.lists(samples16, max_size=400), st.integers(0, 8))
def test_encoding_into_a_buffer_writes_what_encoding_returns(ulaw, samples, spare):
    data = pcm(samples)
    out = bytearray(b"\xaa" * (len(samples) + spare))
    assert ulaw.lin2ulaw_into(data, out) == len(samples)
    assert out[: len(samples)] == ulaw.lin2ulaw(data)
    assert out[len(samples) :] == b"\xaa" * spare


@given(st.binary(max_size=400), st.integers(0, 8))
def test_decoding_into_a_buffer_writes_what_decoding_returns(ulaw, codes, spare):
    out = bytearray(b"\xaa" * (2 * len(codes) + spare))
    assert ulaw.ulaw2lin_into(codes, out) == 2 * len(codes)
    assert out[: 2 * len(codes)] == ulaw.ulaw2lin(codes)
    assert out[2 * len(codes) :] == b"\xaa" * spare


def test_any_bytes_like_object_is_accepted(ulaw):
    data = pcm([0, 1000, -1000, 32767, -32768])
    expected = ulaw.lin2ulaw(data)
    for view in (bytearray(data), memoryview(data), memoryview(b"xx" + data)[2:]):
        assert ulaw.lin2ulaw(view) == expected
    assert ulaw.ulaw2lin(memoryview(expected)) == ulaw.ulaw2lin(expected)


def test_empty_input_gives_empty_output(ulaw):
    assert ulaw.lin2ulaw(b"") == b""
    assert ulaw.ulaw2lin(b"") == b""
    assert ulaw.lin2ulaw_into(b"", bytearray()) == 0
    assert ulaw.ulaw2lin_into(b"", bytearray()) == 0


def test_odd_byte_count_is_refused(ulaw):
    with pytest.raises(ValueError, match="even number of bytes, got 3"):
        ulaw.lin2ulaw(b"\x00\x01\x02")
    with pytest.raises(ValueError, match="even number of bytes"):
        ulaw.lin2ulaw_into(b"\x00", bytearray(4))


def test_short_output_buffer_is_refused_and_left_unchanged(ulaw):
    out = bytearray(b"\xaa" * 3)
    with pytest.raises(ValueError, match="holds 3 bytes, 4 are needed"):
        ulaw.lin2ulaw_into(pcm([1, 2, 3, 4]), out)
    with pytest.raises(ValueError, match="holds 3 bytes, 4 are needed"):
        ulaw.ulaw2lin_into(b"\x01\x02", out)
    assert out == b"\xaa" * 3


def test_read_only_output_buffer_is_refused(ulaw):
    with pytest.raises((TypeError, BufferError)):
        ulaw.lin2ulaw_into(pcm([1, 2]), bytes(2))
