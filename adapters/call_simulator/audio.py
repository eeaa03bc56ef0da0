"""Audio as the simulated caller handles it: 8 kHz signed linear frames and WAV files.

Everything the caller says or hears is signed linear 16-bit little-endian mono at
8000 Hz, cut in 20 ms frames of 320 bytes — the telephone network's own shape. WAV
files are read and written with the standard library (mono or stereo, 16-bit, at a
rate the resampling kernels convert: 8000, 16000 or 24000 Hz).
"""

from __future__ import annotations

__all__ = [
    "AUDIBLE_RMS",
    "CALL_RATE",
    "FRAME_BYTES",
    "FRAME_SECONDS",
    "SILENT_FRAME",
    "AudioFileError",
    "active_level_dbfs",
    "at_telephone_level",
    "audible",
    "frames_of",
    "read_wav",
    "to_call_rate",
    "write_wav",
]

import array
import math
import random
import wave
from pathlib import Path

from kernels.energy import rms
from kernels.resample import resample

CALL_RATE = 8000
FRAME_BYTES = 320
FRAME_SECONDS = 0.020
SILENT_FRAME = bytes(FRAME_BYTES)
_CONVERTIBLE_RATES = (8000, 16000, 24000)

#: A frame louder than this is speech rather than line noise: the telephone default of
#: voice.phone.speech_rms (spec: telephony.md "Speech dials for calls").
AUDIBLE_RMS = 0.012


class AudioFileError(ValueError):
    """A WAV file the simulator cannot play."""


def audible(frame: bytes) -> bool:
    """Whether a frame of signed linear audio carries speech rather than silence."""
    return rms(frame) >= AUDIBLE_RMS


#: Frames quieter than this far below the loudest are pauses, not speech, when the
#: active speech level is measured (a simple form of ITU-T P.56's threshold).
_ACTIVE_MARGIN_DB = 30.0


def active_level_dbfs(pcm: bytes) -> float:
    """The RMS level of the speech in ``pcm`` (dB below full scale), measured over
    its active frames only, so pauses do not lower it; ``-inf`` for silence."""
    levels = [rms(frame) for frame in frames_of(pcm)]
    loudest = max(levels, default=0.0)
    if loudest <= 0.0:
        return -math.inf
    floor = loudest * 10 ** (-_ACTIVE_MARGIN_DB / 20)
    active = [level for level in levels if level >= floor]
    return 10 * math.log10(sum(level * level for level in active) / len(active))


def at_telephone_level(pcm: bytes, level_dbfs: float | None = None,
                       noise_snr_db: float | None = None, *, seed: int = 0) -> bytes:
    """``pcm`` as a telephone line carries it: scaled so its active speech level is
    ``level_dbfs``, then white noise added ``noise_snr_db`` below that level (over the
    whole clip, pauses included). ``None`` leaves either as it is; samples clip at
    full scale. ``seed`` makes the noise repeatable."""
    samples = array.array("h", pcm[:len(pcm) - len(pcm) % 2])
    level = active_level_dbfs(pcm)
    gain = 1.0
    if level_dbfs is not None and level != -math.inf:
        gain = 10 ** ((level_dbfs - level) / 20)
        level = level_dbfs
    noise = 0.0
    if noise_snr_db is not None and level != -math.inf:
        # White noise of RMS ``sigma`` (full scale 1.0) at the asked distance below.
        noise = 10 ** ((level - noise_snr_db) / 20) * 32768
    draw = random.Random(seed).gauss
    out = array.array("h", (
        max(-32768, min(32767, round(sample * gain + (draw(0.0, noise) if noise else 0.0))))
        for sample in samples))
    return out.tobytes()


def to_call_rate(pcm: bytes, sample_rate: int) -> bytes:
    """Signed linear mono audio at ``sample_rate`` converted to 8000 Hz."""
    if sample_rate not in _CONVERTIBLE_RATES:
        raise AudioFileError(f"audio at {sample_rate} Hz cannot be converted; "
                             f"use one of {', '.join(map(str, _CONVERTIBLE_RATES))} Hz")
    if len(pcm) % 2:
        pcm = pcm[:-1]
    return pcm if sample_rate == CALL_RATE else resample(pcm, sample_rate, CALL_RATE)


def frames_of(pcm: bytes) -> list[bytes]:
    """Audio cut in 20 ms frames, the last one padded with silence."""
    frames = [pcm[start:start + FRAME_BYTES] for start in range(0, len(pcm), FRAME_BYTES)]
    if frames and len(frames[-1]) < FRAME_BYTES:
        frames[-1] = frames[-1] + bytes(FRAME_BYTES - len(frames[-1]))
    return frames


def read_wav(path: Path) -> bytes:
    """A 16-bit PCM WAV file as 8 kHz mono audio (stereo is mixed down)."""
    try:
        with wave.open(str(path), "rb") as source:
            channels, width, rate = (source.getnchannels(), source.getsampwidth(),
                                     source.getframerate())
            data = source.readframes(source.getnframes())
    except (OSError, EOFError, wave.Error) as exc:
        raise AudioFileError(f"{path}: not a readable WAV file ({exc})") from None
    if width != 2 or channels not in (1, 2):
        raise AudioFileError(f"{path}: only 16-bit mono or stereo PCM is played "
                             f"(this file has {8 * width}-bit samples, {channels} channels)")
    if channels == 2:
        data = _mix_down(data)
    return to_call_rate(data, rate)


def write_wav(path: Path, pcm: bytes, sample_rate: int = CALL_RATE) -> None:
    """Write signed linear mono audio as a 16-bit PCM WAV file."""
    with wave.open(str(path), "wb") as target:
        target.setnchannels(1)
        target.setsampwidth(2)
        target.setframerate(sample_rate)
        target.writeframes(pcm)


def _mix_down(stereo: bytes) -> bytes:
    samples = memoryview(stereo).cast("h")
    mixed = memoryview(bytearray(len(stereo) // 2)).cast("h")
    for index in range(len(mixed)):
        mixed[index] = (samples[2 * index] + samples[2 * index + 1]) // 2
    return mixed.tobytes()
