"""What the kernel benchmarks measure: each case, its contenders and its goals.

Shared by the pytest-benchmark files (``bench_*.py``) and ``kernels_table.py``,
so both time the same calls on the same data. Every contender runs in this
process: our kernel, the peers a user would otherwise pick (audioop, soxr,
numpy) and a copy of the same bytes as the floor no kernel can go under.
"""

from __future__ import annotations

import array
import importlib
import math
import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from core.records import frozen
from kernels import energy, resample, ulaw
from kernels._resample_spec import filter_taps

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    # stdlib up to 3.12; the audioop-lts wheel installs the same module name on 3.13+
    audioop = importlib.import_module("audioop")

FRAME_MS = 20
BULK_SECONDS = 60
RESAMPLE_CONVERSIONS = ((8000, 16000), (16000, 8000), (24000, 16000), (24000, 8000))


def speech_like(rate: int, seconds: float) -> bytes:
    """Deterministic int16 test signal: a few harmonics with a slow swell, plus hiss.

    Pure Python, so that a run under valgrind need not import numpy.
    """
    hiss = random.Random(7)
    samples = array.array("h")
    for n in range(round(rate * seconds)):
        t = n / rate
        swell = 0.55 + 0.45 * math.sin(2 * math.pi * 3 * t)
        voice = sum(math.sin(2 * math.pi * f * t + f) / k for k, f in enumerate((180, 360, 900, 2300), 1))
        value = round(9000 * (swell * voice + hiss.gauss(0, 0.02)))
        samples.append(max(-32768, min(32767, value)))
    return samples.tobytes()


def frame_of(rate: int) -> bytes:
    return speech_like(rate, FRAME_MS / 1000)


@frozen
class Goal:
    """Our time divided by ``peer``'s must be at most ``at_most`` (per frame),
    or ``peer``'s divided by ours at least ``at_least`` (bulk)."""

    peer: str
    at_most: float | None = None
    at_least: float | None = None

    def met(self, ours: float, theirs: float) -> bool:
        if self.at_most is not None:
            return ours / theirs <= self.at_most
        return theirs / ours >= self.at_least

    def describe(self) -> str:
        if self.at_most is not None:
            return f"<= {self.at_most:g}x {self.peer}"
        return f">= {self.at_least:g}x {self.peer}"


@dataclass
class Case:
    """One operation timed per 20 ms frame (``bulk=False``) or over 60 s of audio."""

    name: str
    bulk: bool
    contenders: dict[str, Callable[[], object]]  # "ours" first
    goals: list[Goal] = field(default_factory=list)
    samples: int = 0  # input samples per call, for throughput
    streaming: bool = False  # a stateful per-frame call: report p99 too


def _copy_floor(data: bytes) -> Callable[[], object]:
    """Copying the input once: the bandwidth floor (bytes() of a bytearray is a memcpy)."""
    source = bytearray(data)
    return lambda: bytes(source)


# --- numpy peers (numpy imported on first use, to keep valgrind runs light) ----


class NumpyCodec:
    """μ-law by table lookup in numpy, and the exact RMS."""

    def __init__(self) -> None:
        import numpy as np

        self.np = np
        quarter_scale = np.arange(0, 65536, 4, dtype=np.uint16).astype(np.int16).tobytes()
        self.encode_table = np.frombuffer(audioop.lin2ulaw(quarter_scale, 2), np.uint8)
        self.decode_table = np.frombuffer(audioop.ulaw2lin(bytes(range(256)), 2), np.int16)

    def lin2ulaw(self, pcm: bytes) -> bytes:
        return self.encode_table[self.np.frombuffer(pcm, self.np.uint16) >> 2].tobytes()

    def ulaw2lin(self, codes: bytes) -> bytes:
        return self.decode_table[self.np.frombuffer(codes, self.np.uint8)].tobytes()

    def rms(self, pcm: bytes) -> float:
        samples = self.np.frombuffer(pcm, self.np.int16).astype(self.np.int64)
        return math.sqrt(int(samples @ samples) / samples.size) / 32768 if samples.size else 0.0


class NumpyResampler:
    """The same polyphase filter, streamed with numpy (gives identical samples)."""

    def __init__(self, from_rate: int, to_rate: int) -> None:
        import numpy as np

        self.np = np
        taps = filter_taps(from_rate, to_rate)
        self.up, self.down = taps.up, taps.down
        self.phases = np.array(taps.phases, dtype=np.int64)
        self.history = np.zeros(taps.taps_per_phase - 1, np.int64)
        self.position = 0

    def process(self, frame: bytes) -> bytes:
        np = self.np
        samples = np.frombuffer(frame, np.int16)
        window = np.concatenate([self.history, samples])
        positions = np.arange(self.position, samples.size * self.up, self.down)
        starts, phases = np.divmod(positions, self.up)
        views = np.lib.stride_tricks.sliding_window_view(window, self.phases.shape[1])
        totals = np.einsum("kt,kt->k", views[starts], self.phases[phases])
        self.position += positions.size * self.down - samples.size * self.up
        self.history = window[samples.size :]
        return np.clip((totals + (1 << 14)) >> 15, -32768, 32767).astype(np.int16).tobytes()


class AudioopDetector:
    """The detector a user would write on audioop.rms: the per-frame peer."""

    def __init__(self, rate: int = 8000) -> None:
        self.rate, self.speaking, self.loud, self.quiet, self.barge = rate, False, 0, 0, 0

    def update(self, frame: bytes) -> int:
        level = audioop.rms(frame, 2) / 32768
        samples, events = len(frame) // 2, 0
        self.barge = self.barge + samples if level >= 0.035 else 0
        if self.barge >= self.rate * 240 // 1000 and self.barge - samples < self.rate * 240 // 1000:
            events |= 4
        if level >= 0.012:
            self.quiet = 0
            self.loud += samples
            if not self.speaking and self.loud >= self.rate * 250 // 1000:
                self.speaking, events = True, events | 1
        else:
            self.loud = 0
            self.quiet += samples
            if self.speaking and self.quiet >= self.rate * 900 // 1000:
                self.speaking, events = False, events | 2
        return events


# --- the cases ----------------------------------------------------------------
# Each family builds its per-frame cases or its bulk ones, so that a run under
# valgrind builds (and imports) no more than the one it counts.


def _ulaw_cases(bulk: bool) -> list[Case]:
    numpy = NumpyCodec()
    if bulk:
        pcm = speech_like(8000, BULK_SECONDS)
        codes = ulaw.lin2ulaw(pcm)
        return [
            Case("ulaw encode", True, {
                "ours": lambda: ulaw.lin2ulaw(pcm),
                "audioop": lambda: audioop.lin2ulaw(pcm, 2),
                "numpy": lambda: numpy.lin2ulaw(pcm),
                "memcpy": _copy_floor(pcm),
            }, [Goal("audioop", at_least=15)], samples=len(codes)),
            Case("ulaw decode", True, {
                "ours": lambda: ulaw.ulaw2lin(codes),
                "audioop": lambda: audioop.ulaw2lin(codes, 2),
                "numpy": lambda: numpy.ulaw2lin(codes),
                "memcpy": _copy_floor(pcm),
            }, [Goal("audioop", at_least=1.0)], samples=len(codes)),
        ]
    pcm = frame_of(8000)
    codes = ulaw.lin2ulaw(pcm)
    encoded, decoded = bytearray(len(codes)), bytearray(len(pcm))
    return [
        Case("ulaw encode", False, {
            "ours": lambda: ulaw.lin2ulaw(pcm),
            "ours (into)": lambda: ulaw.lin2ulaw_into(pcm, encoded),
            "audioop": lambda: audioop.lin2ulaw(pcm, 2),
            "numpy": lambda: numpy.lin2ulaw(pcm),
            "memcpy": _copy_floor(pcm),
        }, [Goal("audioop", at_most=0.25)], samples=len(codes)),
        Case("ulaw decode", False, {
            "ours": lambda: ulaw.ulaw2lin(codes),
            "ours (into)": lambda: ulaw.ulaw2lin_into(codes, decoded),
            "audioop": lambda: audioop.ulaw2lin(codes, 2),
            "numpy": lambda: numpy.ulaw2lin(codes),
            "memcpy": _copy_floor(pcm),
        }, [Goal("audioop", at_most=1.0)], samples=len(codes)),
    ]


def _ratecv_stream(frame: bytes, from_rate: int, to_rate: int) -> Callable[[], object]:
    state = [None]

    def step():
        converted, state[0] = audioop.ratecv(frame, 2, 1, from_rate, to_rate, state[0])
        return converted

    return step


def _resample_case(from_rate: int, to_rate: int, bulk: bool) -> Case:
    import numpy as np
    import soxr

    label = f"resample {from_rate // 1000}k->{to_rate // 1000}k"
    if bulk:
        pcm = speech_like(from_rate, BULK_SECONDS)
        samples = np.frombuffer(pcm, np.int16)
        return Case(label, True, {
            "ours": lambda: resample.resample(pcm, from_rate, to_rate),
            "soxr HQ": lambda: soxr.resample(samples, from_rate, to_rate, quality="HQ"),
            "soxr QQ": lambda: soxr.resample(samples, from_rate, to_rate, quality="QQ"),
            "audioop.ratecv": lambda: audioop.ratecv(pcm, 2, 1, from_rate, to_rate, None),
            "numpy": lambda: NumpyResampler(from_rate, to_rate).process(pcm),
            "memcpy": _copy_floor(pcm),
        }, [Goal("soxr HQ", at_least=1.0)], samples=len(samples))
    pcm = frame_of(from_rate)
    samples = np.frombuffer(pcm, np.int16)
    hq, qq = (
        soxr.ResampleStream(from_rate, to_rate, 1, dtype="int16", quality=quality).resample_chunk
        for quality in ("HQ", "QQ")
    )
    ours, ours_into = resample.Resampler(from_rate, to_rate), resample.Resampler(from_rate, to_rate)
    numpy = NumpyResampler(from_rate, to_rate)
    out = bytearray(2 * ours.output_length(len(samples)))
    return Case(label, False, {
        "ours": lambda: ours.process(pcm),
        "ours (into)": lambda: ours_into.process_into(pcm, out),
        "soxr HQ stream": lambda: hq(samples),
        "soxr QQ stream": lambda: qq(samples),
        "audioop.ratecv": _ratecv_stream(pcm, from_rate, to_rate),
        "numpy": lambda: numpy.process(pcm),
        "memcpy": _copy_floor(pcm),
    }, [Goal("soxr HQ stream", at_most=0.4), Goal("audioop.ratecv", at_most=0.75)],
        samples=len(samples), streaming=True)


def _resample_cases(bulk: bool) -> list[Case]:
    return [_resample_case(*conversion, bulk) for conversion in RESAMPLE_CONVERSIONS]


def _energy_cases(bulk: bool) -> list[Case]:
    numpy = NumpyCodec()
    if bulk:
        pcm = speech_like(8000, BULK_SECONDS)
        return [
            Case("rms", True, {
                "ours": lambda: energy.rms(pcm),
                "audioop": lambda: audioop.rms(pcm, 2),
                "numpy": lambda: numpy.rms(pcm),
                "memcpy": _copy_floor(pcm),
            }, samples=len(pcm) // 2),
        ]
    pcm = frame_of(8000)
    ours, theirs = energy.Detector(), AudioopDetector()
    return [
        Case("rms", False, {
            "ours": lambda: energy.rms(pcm),
            "audioop": lambda: audioop.rms(pcm, 2),
            "numpy": lambda: numpy.rms(pcm),
            "memcpy": _copy_floor(pcm),
        }, [Goal("audioop", at_most=0.5)], samples=len(pcm) // 2),
        Case("detector", False, {
            "ours": lambda: ours.update(pcm),
            "audioop detector": lambda: theirs.update(pcm),
            "memcpy": _copy_floor(pcm),
        }, [Goal("audioop detector", at_most=0.5)], samples=len(pcm) // 2, streaming=True),
    ]


#: Each family's builder, with the case-name prefixes it makes.
FAMILIES = (
    (("ulaw",), _ulaw_cases),
    (("resample",), _resample_cases),
    (("rms", "detector"), _energy_cases),
)


def all_cases(bulk: bool | None = None, prefix: str = "") -> list[Case]:
    """The cases whose names start with ``prefix``: all, or only bulk or per-frame ones."""
    kinds = (False, True) if bulk is None else (bulk,)
    cases = []
    for names, build in FAMILIES:
        if any(name.startswith(prefix) or prefix.startswith(name) for name in names):
            for kind in kinds:
                cases += [case for case in build(kind) if case.name.startswith(prefix)]
    return cases


def find_case(name: str, bulk: bool) -> Case:
    return next(case for case in all_cases(bulk, name) if case.name == name)


def benchmark_params(prefix: str) -> list:
    """pytest parameters (case, contender) for every case whose name starts with ``prefix``."""
    import pytest

    return [
        pytest.param(case, name, id=f"{case.name}-{'bulk' if case.bulk else 'frame'}-{name}")
        for case in all_cases(prefix=prefix)
        for name in case.contenders
    ]
