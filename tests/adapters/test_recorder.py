"""The call recorder writes a two-channel μ-law WAV that libsndfile and sox read,
grows it while the call runs, and reports a failing disk instead of crashing."""

from __future__ import annotations

import math
import os
import shutil
import struct
import subprocess
import tempfile
import uuid

import pytest
import soundfile
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.recorder import CallRecorder, RecordingFailed
from adapters.recording_playback import RecordingUnreadable, open_recording
from core.wav import ULAW_HEADER_BYTES, pcm16_wav, read_wav_header
from kernels.ulaw import lin2ulaw, ulaw2lin

FRAME = 160  # 20 ms at 8 kHz


def tone(frequency: float, frames: int, start: int = 0, amplitude: int = 12000) -> bytes:
    return struct.pack(f"<{frames}h", *(
        round(amplitude * math.sin(2 * math.pi * frequency * (start + n) / 8000)) for n in range(frames)))


def as_companded(pcm: bytes) -> list[int]:
    """What a μ-law channel holds once decoded: the samples after one round trip."""
    decoded = ulaw2lin(lin2ulaw(pcm))
    return list(struct.unpack(f"<{len(decoded) // 2}h", decoded))


def record(tmp_path, steps):
    recorder = CallRecorder.create(tmp_path, uuid.uuid4())
    for caller, line in steps:
        recorder.write(caller, line)
    recorder.close()
    return recorder


def two_sided_call(seconds: float = 2.5):
    """Steps of a call: the caller talks the first half, the line the second."""
    steps, caller_all, line_all = [], b"", b""
    count = int(seconds * 50)
    for step in range(count):
        caller = tone(440, FRAME, step * FRAME) if step < count // 2 else b""
        line = tone(1000, FRAME, step * FRAME) if step >= count // 2 else b""
        steps.append((caller, line))
        caller_all += caller or bytes(2 * FRAME)
        line_all += line or bytes(2 * FRAME)
    return steps, caller_all, line_all


def test_libsndfile_reads_two_channels_of_8khz_ulaw_with_the_right_samples(tmp_path):
    steps, caller, line = two_sided_call()
    recorder = record(tmp_path, steps)
    info = soundfile.info(str(recorder.path))
    assert (info.format, info.subtype, info.channels, info.samplerate) == ("WAV", "ULAW", 2, 8000)
    assert info.frames == len(steps) * FRAME
    data, rate = soundfile.read(str(recorder.path), dtype="int16")
    assert rate == 8000
    assert data[:, 0].tolist() == as_companded(caller)  # caller on the left
    assert data[:, 1].tolist() == as_companded(line)  # the line on the right


def test_the_file_is_named_after_the_call_in_the_recordings_directory(tmp_path):
    call_id = uuid.uuid4()
    recorder = CallRecorder.create(tmp_path / "recordings", call_id)
    recorder.close()
    assert recorder.path == tmp_path / "recordings" / f"{call_id}.wav"
    assert recorder.path.exists()


@pytest.mark.skipif(shutil.which("soxi") is None, reason="sox is not installed")
def test_soxi_reads_it_too(tmp_path):
    steps, _, _ = two_sided_call(1.0)
    recorder = record(tmp_path, steps)
    def soxi(flag: str) -> str:
        return subprocess.run(["soxi", flag, str(recorder.path)], capture_output=True, text=True,
                              check=True).stdout.strip()
    assert soxi("-c") == "2"
    assert soxi("-r") == "8000"
    assert soxi("-s") == str(len(steps) * FRAME)
    assert soxi("-e") == "u-law"


def test_a_quiet_or_short_side_is_padded_with_silence(tmp_path):
    loud = tone(300, FRAME)
    recorder = record(tmp_path, [(loud, b""), (loud[:100], loud), (b"", b"")])
    data, _ = soundfile.read(str(recorder.path), dtype="int16")
    assert len(data) == 2 * FRAME  # an empty step adds nothing
    assert data[:FRAME, 1].tolist() == [0] * FRAME
    assert data[FRAME + 50:, 0].tolist() == [0] * (FRAME - 50)
    assert data[FRAME:, 1].tolist() == as_companded(loud)


def test_the_header_grows_with_the_file_while_the_call_runs(tmp_path):
    recorder = CallRecorder.create(tmp_path, uuid.uuid4())
    for step in range(120):  # 2.4 s: at least two flushes, some still pending
        recorder.write(tone(440, FRAME, step * FRAME), b"")
    on_disk = recorder.path.read_bytes()
    found = read_wav_header(on_disk)
    assert found.frames > 0 and found.data_offset + found.data_bytes == len(on_disk)
    assert soundfile.info(str(recorder.path)).frames == found.frames  # valid mid-call
    recorder.close()
    assert soundfile.info(str(recorder.path)).frames == 120 * FRAME
    recorder.close()  # twice is harmless


samples = st.lists(st.integers(-32768, 32767), max_size=200)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(samples, samples), max_size=12))
def test_any_steps_come_back_aligned_with_silence_filling_the_gaps(steps):
    caller_expected, line_expected = [], []
    with tempfile.TemporaryDirectory() as directory:
        recorder = CallRecorder.create(directory, uuid.uuid4())
        for caller, line in steps:
            length = max(len(caller), len(line))
            recorder.write(struct.pack(f"<{len(caller)}h", *caller),
                           struct.pack(f"<{len(line)}h", *line))
            caller_expected += caller + [0] * (length - len(caller))
            line_expected += line + [0] * (length - len(line))
        recorder.close()
        data = recorder.path.read_bytes()
    found = read_wav_header(data)
    frames = data[found.data_offset:]
    assert found.frames == len(caller_expected) == len(frames) // 2
    assert frames[0::2] == lin2ulaw(struct.pack(f"<{len(caller_expected)}h", *caller_expected))
    assert frames[1::2] == lin2ulaw(struct.pack(f"<{len(line_expected)}h", *line_expected))


def test_an_odd_byte_count_is_refused(tmp_path):
    recorder = CallRecorder.create(tmp_path, uuid.uuid4())
    with pytest.raises(ValueError, match="even number"):
        recorder.write(b"\x00" * 3, b"")
    recorder.close()


def test_a_full_disk_mid_call_is_reported_and_leaves_a_readable_file(tmp_path):
    recorder = CallRecorder.create(tmp_path, uuid.uuid4())
    for step in range(60):
        recorder.write(tone(440, FRAME, step * FRAME), b"")
    kept = read_wav_header(recorder.path.read_bytes()).frames
    assert kept > 0
    # From here on the recording's descriptor writes to /dev/full: ENOSPC, as on a full disk.
    full = os.open("/dev/full", os.O_WRONLY)
    try:
        os.dup2(full, recorder._fd)
    finally:
        os.close(full)
    with pytest.raises(RecordingFailed, match="disk is full") as failure:
        for step in range(60, 200):
            recorder.write(tone(440, FRAME, step * FRAME), b"")
    assert str(recorder.path) in str(failure.value)
    assert recorder.closed
    with pytest.raises(RecordingFailed, match="closed"):
        recorder.write(b"", b"")
    recorder.close()  # after a failure: nothing more to do, nothing raised
    assert soundfile.info(str(recorder.path)).frames == kept


def test_a_directory_that_cannot_be_made_is_reported(tmp_path):
    (tmp_path / "taken").write_text("a file where the directory should be")
    with pytest.raises(RecordingFailed, match="cannot create the recording"):
        CallRecorder.create(tmp_path / "taken" / "recordings", uuid.uuid4())


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any permission")
def test_a_directory_without_write_permission_is_reported(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(RecordingFailed, match="permission denied"):
            CallRecorder.create(locked, uuid.uuid4())
    finally:
        locked.chmod(0o700)


def test_an_existing_file_is_never_overwritten(tmp_path):
    call_id = uuid.uuid4()
    (tmp_path / f"{call_id}.wav").write_bytes(b"someone else's")
    with pytest.raises(RecordingFailed, match="cannot create"):
        CallRecorder.create(tmp_path, call_id)
    assert (tmp_path / f"{call_id}.wav").read_bytes() == b"someone else's"


def test_the_header_is_rewritten_in_place(tmp_path):
    recorder = record(tmp_path, [(tone(200, FRAME), b"")] * 3)
    data = recorder.path.read_bytes()
    assert len(data) == ULAW_HEADER_BYTES + 2 * 3 * FRAME
    assert data[:4] == b"RIFF" and data.count(b"RIFF") == 1


# -- playing it back ------------------------------------------------------------------


async def play(path) -> bytes:
    async with await open_recording(path) as recording:
        data = b"".join([chunk async for chunk in recording.chunks()])
    assert len(data) == recording.content_length
    return data


@pytest.mark.anyio
async def test_a_recording_plays_as_16_bit_pcm_with_both_sides(tmp_path):
    steps, caller, line = two_sided_call(1.5)
    recorder = record(tmp_path, steps)
    played = tmp_path / "played.wav"
    played.write_bytes(await play(recorder.path))
    info = soundfile.info(str(played))
    assert (info.subtype, info.channels, info.samplerate) == ("PCM_16", 2, 8000)
    data, _ = soundfile.read(str(played), dtype="int16")
    assert data[:, 0].tolist() == as_companded(caller)
    assert data[:, 1].tolist() == as_companded(line)


@pytest.mark.anyio
async def test_a_recording_still_being_written_plays_what_its_header_says(tmp_path):
    recorder = CallRecorder.create(tmp_path, uuid.uuid4())
    for step in range(75):  # 1.5 s: one second on disk, the rest pending
        recorder.write(tone(440, FRAME, step * FRAME), b"")
    async with await open_recording(recorder.path) as recording:
        assert recording.content_length == 44 + 2 * 2 * 8000
    recorder.close()


@pytest.mark.anyio
async def test_what_is_not_a_recording_is_refused_and_a_missing_one_is_not_found(tmp_path):
    (tmp_path / "text.wav").write_text("hello")
    with pytest.raises(RecordingUnreadable, match="not a recording"):
        await open_recording(tmp_path / "text.wav")
    (tmp_path / "pcm.wav").write_bytes(pcm16_wav(bytes(320), 8000))
    with pytest.raises(RecordingUnreadable, match="not μ-law"):
        await open_recording(tmp_path / "pcm.wav")
    with pytest.raises(FileNotFoundError):
        await open_recording(tmp_path / "absent.wav")
