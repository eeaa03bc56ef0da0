"""A field corpus for turn-taking: caller speech as a real line brings it, with the truth.

Nothing is downloaded. Utterances are spoken by eSpeak NG (the ``espeakng-loader``
wheel, as ``adapters.speech.espeak`` drives it) in three voices at two speeds: short
answers ("yes", "no", "okay", "stop", single digits) and ordinary questions. The truth
(onset, offset) is read from the clean signal; each utterance is then set to an active
speech level (ITU-T P.56 style: the mean power of the frames above a threshold that
is itself 15.9 dB under that level, iterated), mixed with noise (white, pink, babble
made of other utterances, 50 Hz hum with its odd harmonics) at an SNR against that
active level, and passed through μ-law at 8 kHz, as a carrier or a PBX delivers it.

Sets (``build()`` returns all; the counts are printed by ``benchmarks.turns``):

* ``turns``: the full grid of 5 levels × 4 noises × 3 SNRs, each condition with a
  rotating sample of ``PER_CONDITION`` utterances (every utterance appears at several
  conditions), 1 s of the line before the speech and 2 s after;
* ``noise``: noise alone, each noise at the levels 10, 20 and 30 dB under −26 dBFS
  speech, ``NOISE_SECONDS`` each — for false starts;
* ``echo``: the agent speaking (−18 dBFS active) with its line echo 20 dB down,
  40 ms late, over faint line noise, ``ECHO_SECONDS`` in each voice and speed — for
  false barge-ins;
* ``barge``: the same with the caller starting to speak 1.2 s into the agent's
  speech, at −35, −32, −26 and −18 dBFS — for barge-in latency.

The corpus is cached as ``.npz`` under ``benchmarks/.corpus/`` (gitignored); it is
made again when this file changes. Everything is seeded: the same corpus each time.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kernels.resample import resample
from kernels.ulaw import lin2ulaw, ulaw2lin

RATE = 8000
CACHE = Path(__file__).resolve().parent / ".corpus"

SHORT = ("yes", "no", "okay", "stop", "three", "seven", "nine")
QUESTIONS = (
    "What time do you open tomorrow?",
    "Can I book an appointment for Friday morning?",
    "Is the doctor available next week?",
    "How much does a consultation cost?",
)
AGENT = (
    "Thank you for calling. I can book, move or cancel an appointment for you, "
    "and I can take a message for the practice. Our opening hours are eight until six "
    "on weekdays, and nine until one on Saturdays. Please tell me how I can help you today."
)
VOICES = ("en-us", "en-gb", "en-us+f3")
SPEEDS = (150, 200)  # words a minute
LEVELS = (-40.0, -32.0, -26.0, -18.0, -12.0)
NOISES = ("white", "pink", "babble", "hum")
SNRS = (30.0, 20.0, 10.0)
PER_CONDITION = 10
NOISE_SECONDS = 50.0
NOISE_SPEECH_LEVEL = -26.0
AGENT_LEVEL = -18.0
ECHO_LOSS_DB = 20.0
ECHO_DELAY_MS = 40
LINE_NOISE_DB = -65.0
ECHO_SECONDS = 100.0
BARGE_LEVELS = (-35.0, -32.0, -26.0, -18.0)
BARGE_AT = 1.2
LEAD, TAIL = 1.0, 2.0


@dataclass
class Item:
    """One recording of the line with its truth (seconds from its start)."""

    name: str
    audio: np.ndarray  # int16 at 8 kHz, as decoded from μ-law
    onset: float | None = None
    offset: float | None = None
    level: float | None = None
    snr: float | None = None
    noise: str | None = None
    played: np.ndarray | None = None  # the agent's own audio, int16, aligned (echo, barge)
    tags: dict = field(default_factory=dict)


# -- speech


def _espeak():
    from adapters.speech import espeak

    with espeak._LOCK:
        engine = espeak._loaded()
    engine._lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return engine


def speak(text: str, voice: str, speed: int) -> np.ndarray:
    """``text`` in ``voice`` at ``speed`` words a minute, float at 8 kHz, silence trimmed."""
    engine = _espeak()
    engine.use_voice(voice)
    engine._lib.espeak_SetParameter(1, speed, 0)  # espeakRATE, absolute
    pcm = resample(resample(engine.speak(text), 22050, 16000), 16000, RATE)
    audio = np.frombuffer(pcm, dtype=np.int16).astype(np.float64)
    loud = np.flatnonzero(np.abs(audio) > 64)
    return audio[loud[0]:loud[-1] + 1] if len(loud) else audio


def _frame_power(audio: np.ndarray, frame: int = 80) -> np.ndarray:
    usable = len(audio) // frame * frame
    return np.mean(audio[:usable].reshape(-1, frame) ** 2, axis=1)


def active_level(audio: np.ndarray) -> float:
    """Active speech level in dB of full scale (P.56 style, 10 ms frames)."""
    power = _frame_power(audio) / 32768.0**2
    threshold = power.max() * 1e-4
    for _ in range(8):
        active = power[power >= threshold]
        level = float(np.mean(active))
        threshold = level * 10 ** (-15.9 / 10)
    return 10 * math.log10(level)


def truth(audio: np.ndarray, lead: float) -> tuple[float, float]:
    """Onset and offset (s) of clean speech: the first and last 10 ms frame within
    30 dB of its active level."""
    power = _frame_power(audio) / 32768.0**2
    floor = 10 ** ((active_level(audio) - 30) / 10)
    speech = np.flatnonzero(power >= floor)
    return lead + speech[0] * 0.01, lead + (speech[-1] + 1) * 0.01


def at_level(audio: np.ndarray, dbfs: float) -> np.ndarray:
    return audio * 10 ** ((dbfs - active_level(audio)) / 20)


# -- noise


def noise(kind: str, samples: int, rng: np.random.Generator, babble: list[np.ndarray]) -> np.ndarray:
    """``samples`` of noise of ``kind`` at an RMS of 1.0."""
    if kind == "white":
        out = rng.standard_normal(samples)
    elif kind == "pink":
        spectrum = np.fft.rfft(rng.standard_normal(samples))
        freqs = np.arange(len(spectrum), dtype=np.float64)
        freqs[0] = 1.0
        out = np.fft.irfft(spectrum / np.sqrt(freqs), samples)
    elif kind == "hum":
        t = np.arange(samples) / RATE
        phase = rng.uniform(0, 2 * np.pi)
        out = sum(np.sin(2 * np.pi * 50 * k * t + phase * k) / k for k in (1, 3, 5, 7))
    elif kind == "babble":
        out = np.zeros(samples)
        for _ in range(6):  # six talkers, each a loop of utterances from a random place
            talker = np.concatenate([babble[i] for i in rng.permutation(len(babble))])
            start = rng.integers(len(talker))
            out += np.resize(np.roll(talker, -start), samples)
    else:
        raise ValueError(kind)
    return out / np.sqrt(np.mean(out**2))


def line(audio: np.ndarray) -> np.ndarray:
    """Through μ-law at 8 kHz and back, as the transports deliver it."""
    pcm = np.clip(np.round(audio), -32768, 32767).astype(np.int16).tobytes()
    return np.frombuffer(ulaw2lin(lin2ulaw(pcm)), dtype=np.int16).copy()


# -- the sets


def _utterances() -> list[tuple[str, str, int, np.ndarray]]:
    said = []
    for text in SHORT + QUESTIONS:
        for voice in VOICES:
            for speed in SPEEDS:
                said.append((text, voice, speed, speak(text, voice, speed)))
    return said


def _turns(said, rng, babble) -> list[Item]:
    items = []
    condition = 0
    for level in LEVELS:
        for kind in NOISES:
            for snr in SNRS:
                for k in range(PER_CONDITION):
                    text, voice, speed, clean = said[(condition * 7 + k * 5) % len(said)]
                    speech = at_level(clean, level)
                    body = np.concatenate([np.zeros(int(LEAD * RATE)), speech,
                                           np.zeros(int(TAIL * RATE))])
                    onset, offset = truth(clean, LEAD)
                    noisy = body + noise(kind, len(body), rng, babble) * 10 ** ((level - snr) / 20) * 32768
                    items.append(Item(f"{text}|{voice}|{speed}|{level:g}|{kind}|{snr:g}",
                                      line(noisy), onset, offset, level, snr, kind,
                                      tags={"text": text, "seconds": len(clean) / RATE}))
                condition += 1
    return items


def _noise_only(rng, babble) -> list[Item]:
    items = []
    samples = int(NOISE_SECONDS * RATE)
    for kind in NOISES:
        for snr in SNRS:
            level = NOISE_SPEECH_LEVEL - snr
            audio = noise(kind, samples, rng, babble) * 10 ** (level / 20) * 32768
            items.append(Item(f"{kind}|{level:g}", line(audio), level=level, snr=snr, noise=kind))
    return items


def _agent_line(agent: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """The agent's audio as played, and its echo over faint line noise as heard."""
    played = np.round(at_level(agent, AGENT_LEVEL))
    delay = int(ECHO_DELAY_MS * RATE / 1000)
    echo = np.concatenate([np.zeros(delay), played[:-delay]]) * 10 ** (-ECHO_LOSS_DB / 20)
    echo += rng.standard_normal(len(echo)) * 10 ** (LINE_NOISE_DB / 20) * 32768
    return played, echo


def _echo_and_barge(said, rng) -> tuple[list[Item], list[Item]]:
    echo_items, barge_items = [], []
    for voice in VOICES:
        for speed in SPEEDS:
            # About 100 s of the agent speaking, with the pauses of a conversation.
            said_once = speak(AGENT, voice, speed)
            pieces = []
            while sum(len(p) for p in pieces) < ECHO_SECONDS * RATE:
                pieces += [said_once, np.zeros(int(rng.uniform(0.2, 1.0) * RATE))]
            played, heard = _agent_line(np.concatenate(pieces), rng)
            echo_items.append(Item(f"echo|{voice}|{speed}", line(heard),
                                   played=played.astype(np.int16)))
    agent = speak(AGENT, "en-gb", 170)
    played, heard = _agent_line(agent, rng)
    starts = (0, 2, 3, 5, 6, 8, 9, 11, 12, 14)
    for level in BARGE_LEVELS:
        for k, index in enumerate(starts):
            text, voice, speed, clean = said[(index * 6 + k) % len(said)]
            at = int((BARGE_AT + 0.37 * k) * RATE)
            mixed = heard.copy()
            speech = at_level(clean, level)
            mixed[at:at + len(speech)] += speech[:len(mixed) - at]
            onset, offset = truth(clean, at / RATE)
            barge_items.append(Item(f"barge|{text}|{level:g}", line(mixed), onset, offset, level,
                                    played=played.astype(np.int16),
                                    tags={"text": text, "seconds": len(clean) / RATE}))
    return echo_items, barge_items


def _digest() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def _save(path: Path, sets: dict[str, list[Item]]) -> None:
    arrays, meta = {}, []
    for set_name, items in sets.items():
        for i, item in enumerate(items):
            key = f"{set_name}{i}"
            arrays[key] = item.audio
            if item.played is not None:
                arrays[key + "p"] = item.played
            meta.append((set_name, key, item.name, item.onset, item.offset, item.level,
                         item.snr, item.noise, item.tags))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, meta=np.array(json.dumps(meta, default=float)), **arrays)


def _load(path: Path) -> dict[str, list[Item]]:
    data = np.load(path)
    sets: dict[str, list[Item]] = {}
    for set_name, key, name, onset, offset, level, snr, kind, tags in json.loads(str(data["meta"])):
        played = data[key + "p"] if key + "p" in data.files else None
        sets.setdefault(set_name, []).append(
            Item(name, data[key], onset, offset, level, snr, kind, played, tags))
    return sets


def build() -> dict[str, list[Item]]:
    """The corpus: from the cache, or made (about a minute) and cached."""
    path = CACHE / f"turns-{_digest()}.npz"
    if path.exists():
        return _load(path)
    rng = np.random.default_rng(20261125)
    said = _utterances()
    babble = [clean for *_, clean in said]
    turns = _turns(said, rng, babble)
    noise_only = _noise_only(rng, babble)
    echo, barge = _echo_and_barge(said, rng)
    sets = {"turns": turns, "noise": noise_only, "echo": echo, "barge": barge}
    _save(path, sets)
    return sets
