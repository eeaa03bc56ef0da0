"""WAV bytes: the PCM turn file, the μ-law recording header, interleaving, reading back."""

from __future__ import annotations

import io
import struct
import wave

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.wav import (
    FORMAT_MULAW,
    FORMAT_PCM,
    ULAW_HEADER_BYTES,
    WavError,
    interleave,
    pcm16_wav,
    read_wav_header,
    ulaw_header,
)


def test_pcm16_wav_is_read_by_the_standard_library():
    samples = struct.pack("<4h", 0, 1000, -1000, 32767)
    with wave.open(io.BytesIO(pcm16_wav(samples, 16000))) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 16000)
        assert wav.readframes(10) == samples


def test_pcm16_wav_refuses_half_a_sample():
    with pytest.raises(ValueError, match="whole 16-bit frames"):
        pcm16_wav(b"\x00\x01\x02", 8000)


def test_ulaw_header_layout():
    header = ulaw_header(8000)
    assert len(header) == ULAW_HEADER_BYTES == 58
    riff_size, = struct.unpack_from("<I", header, 4)
    assert header[:4] == b"RIFF" and header[8:12] == b"WAVE"
    assert riff_size == 58 - 8 + 16000
    assert header[12:16] == b"fmt " and struct.unpack_from("<I", header, 16) == (18,)
    tag, channels, rate, byte_rate, block, bits, extra = struct.unpack_from("<HHIIHHH", header, 20)
    assert (tag, channels, rate, byte_rate, block, bits, extra) == (FORMAT_MULAW, 2, 8000, 16000, 2, 8, 0)
    assert header[38:42] == b"fact" and struct.unpack_from("<II", header, 42) == (4, 8000)
    assert header[50:54] == b"data" and struct.unpack_from("<I", header, 54) == (16000,)


def test_ulaw_header_keeps_its_length_as_the_file_grows():
    assert {len(ulaw_header(frames)) for frames in (0, 1, 160, 10**6)} == {ULAW_HEADER_BYTES}


def test_ulaw_header_refuses_more_than_a_riff_size_holds():
    with pytest.raises(ValueError, match="do not fit"):
        ulaw_header(2**31)


def test_interleave_puts_left_first():
    assert interleave(b"abc", b"xyz") == b"axbycz"


def test_interleave_refuses_misaligned_sides():
    with pytest.raises(ValueError, match="differ in length"):
        interleave(b"ab", b"x")


@given(st.binary(max_size=200), st.binary(max_size=200))
def test_interleave_keeps_each_side(left, right):
    right = (right * 200)[: len(left)] if right else bytes(len(left))
    frames = interleave(left, right)
    assert frames[0::2] == left and frames[1::2] == right


def test_read_wav_header_finds_the_recording_data():
    data = ulaw_header(3) + b"\x01\x02" * 3
    found = read_wav_header(data)
    assert (found.format_tag, found.channels, found.sample_rate, found.bits_per_sample) == (
        FORMAT_MULAW, 2, 8000, 8)
    assert (found.data_offset, found.data_bytes, found.frames) == (ULAW_HEADER_BYTES, 6, 3)


def test_read_wav_header_skips_unknown_chunks_and_clips_a_short_file():
    body = pcm16_wav(b"\x00\x00" * 10, 8000)
    # a LIST chunk of odd length (padded) before the data, then a file cut short
    listed = body[:36] + b"LIST" + struct.pack("<I", 3) + b"abc\x00" + body[36:]
    found = read_wav_header(listed[:-4])
    assert found.format_tag == FORMAT_PCM
    assert found.data_offset == 36 + 12 + 8 and found.data_bytes == 16


@pytest.mark.parametrize("data, reason", [
    (b"", "not a RIFF WAVE"),
    (b"RIFF\x00\x00\x00\x00WAVX", "not a RIFF WAVE"),
    (b"RIFF\x00\x00\x00\x00WAVEdata\x00\x00\x00\x00", "before the fmt"),
    (b"RIFF\x00\x00\x00\x00WAVEfmt \x04\x00\x00\x00abcd", "too short"),
    (ulaw_header(0)[:50], "no data chunk"),
])
def test_read_wav_header_says_what_is_wrong(data, reason):
    with pytest.raises(WavError, match=reason):
        read_wav_header(data)


@given(st.binary(max_size=120))
def test_read_wav_header_raises_only_its_own_error(data):
    for candidate in (data, b"RIFF\x00\x00\x00\x00WAVE" + data):
        try:
            read_wav_header(candidate)
        except WavError:
            pass


def test_read_wav_header_of_the_start_of_a_file_trusts_the_file_size():
    start = ulaw_header(1000)  # the header alone, of a file holding 1000 frames
    assert read_wav_header(start, ULAW_HEADER_BYTES + 2000).data_bytes == 2000
    # a file shorter than its header says, mid-frame: whole frames only
    assert read_wav_header(start, ULAW_HEADER_BYTES + 901).data_bytes == 900
