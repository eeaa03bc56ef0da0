"""Instant speech engines, an agent and a caller for tests of a call's voice session.

What belongs here: ``FakeSynthesiser`` (a steady tone, 40 ms per character, at any of
the synthesis rates, or unavailable), ``FakeRecogniser`` (scripted transcripts),
``FakeDetector`` (scripted probabilities or failure), ``FakeAgent`` (a scripted
answer and ending), ``FakeRecorder``, ``MemoryTransport`` (a ``CallTransport`` over
in-memory anyio streams that logs what the session did) and ``Caller`` (sends a 20 ms
frame of speech or quiet every 20 ms, like a telephone line). They follow the engine
contracts of ``adapters.speech``: PCM16 little-endian mono, even-length chunks.
"""

from __future__ import annotations

import math
import struct
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import anyio

from adapters.voice.session import TurnTimings
from adapters.voice.transport import CallTransport
from core.call_outcome import CallInput

SPEECH_MS_PER_CHAR = 40


class EngineDown(Exception):
    """What a fake engine raises when told to be unavailable."""


def tone(seconds: float, rate: int, amplitude: float = 0.25, hz: float = 440.0) -> bytes:
    count = int(seconds * rate)
    peak = int(amplitude * 32767)
    return struct.pack(f"<{count}h", *(int(peak * math.sin(2 * math.pi * hz * i / rate))
                                       for i in range(count)))


@dataclass
class FakeSynthesiser:
    sample_rate: int = 16000
    down: bool = False
    fail_after_chunks: int | None = None
    spoken: list[str] = field(default_factory=list)

    def seconds_of(self, text: str) -> float:
        return len(text) * SPEECH_MS_PER_CHAR / 1000

    async def stream(self, text: str) -> AsyncIterator[bytes]:
        if self.down:
            raise EngineDown("synthesis is down")
        self.spoken.append(text)
        audio = tone(self.seconds_of(text), self.sample_rate, amplitude=0.1)
        step = self.sample_rate // 10 * 2  # 100 ms chunks
        for index, start in enumerate(range(0, len(audio), step)):
            if self.fail_after_chunks is not None and index >= self.fail_after_chunks:
                raise EngineDown("synthesis went away")
            yield audio[start:start + step]
            await anyio.sleep(0)


@dataclass
class FakeRecogniser:
    transcripts: list[str] = field(default_factory=list)
    heard: list[tuple[int, int]] = field(default_factory=list)  # (bytes, rate) per turn
    down: bool = False

    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        self.heard.append((len(pcm16), sample_rate))
        if self.down:
            raise EngineDown("recognition is down")
        return self.transcripts.pop(0) if self.transcripts else "hello"


@dataclass
class FakeDetector:
    probabilities: list[float] = field(default_factory=list)
    down: bool = False
    asked: list[str] = field(default_factory=list)

    async def end_of_turn(self, transcript: str) -> float:
        self.asked.append(transcript)
        if self.down:
            raise EngineDown("turn detection is down")
        return self.probabilities.pop(0) if self.probabilities else 1.0


@dataclass
class FakeEngines:
    synthesiser: FakeSynthesiser = field(default_factory=FakeSynthesiser)
    recogniser: FakeRecogniser = field(default_factory=FakeRecogniser)
    turn_detector: FakeDetector | None = None


@dataclass
class FakeAgent:
    answers: list[str] = field(default_factory=list)
    endings: list[CallInput | None] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)  # answers the agent wrote in full
    waits: list[float] = field(default_factory=list)  # seconds from speech end to asking
    timings: list[TurnTimings] = field(default_factory=list)
    _ending: CallInput | None = None

    async def answer(self, transcript: str, waited: float = 0.0) -> AsyncIterator[str]:
        self.questions.append(transcript)
        self.waits.append(waited)
        text = self.answers.pop(0) if self.answers else "Certainly."
        self._ending = self.endings.pop(0) if self.endings else None
        for word in text.split(" "):
            yield word + " "
            await anyio.sleep(0)
        self.finished.append(text)

    def ending(self) -> CallInput | None:
        return self._ending

    async def timed(self, timings: TurnTimings) -> None:
        self.timings.append(timings)


@dataclass
class FakeRecorder:
    fail_after: int | None = None
    writes: int = 0
    caller_bytes: int = 0
    line_bytes: int = 0
    closed: bool = False

    def write(self, caller: bytes, line: bytes) -> None:
        if self.fail_after is not None and self.writes >= self.fail_after:
            raise OSError(28, "No space left on device")
        self.writes += 1
        self.caller_bytes += len(caller)
        self.line_bytes += len(line)

    def close(self) -> None:
        self.closed = True


class MemoryTransport(CallTransport):
    """A ``CallTransport`` fed by a ``Caller`` through an in-memory stream. It writes
    frames at once from the ticker (``frame_writer``, as AudioSocket does) unless
    ``writes_at_once`` is False (then only by awaiting, as the carrier does)."""

    def __init__(self, writes_at_once: bool = True) -> None:
        self.writes_at_once = writes_at_once
        self.to_session, self._inbound = anyio.create_memory_object_stream[object](1000)
        self.log: list[tuple[str, object]] = []
        self.changed = anyio.Event()

    def _note(self, kind: str, detail: object = None) -> None:
        self.log.append((kind, detail))
        self.changed.set()
        self.changed = anyio.Event()

    def count(self, kind: str) -> int:
        return sum(1 for entry in self.log if entry[0] == kind)

    async def until(self, check: Callable[[], bool]) -> None:
        while not check():
            await self.changed.wait()

    async def receive(self) -> bytes | None:
        try:
            item = await self._inbound.receive()
        except anyio.EndOfStream:
            return None
        if isinstance(item, Exception):
            raise item
        return item  # type: ignore[return-value]

    async def send_frame(self, pcm: bytes) -> None:
        self._write_frame(pcm)

    def frame_writer(self) -> Callable[[bytes], bool] | None:
        return self._write_frame if self.writes_at_once else None

    def _write_frame(self, pcm: bytes) -> bool:
        assert len(pcm) == 320
        self._note("frame", pcm)
        return True

    async def end_of_speech(self, utterance: int) -> None:
        self._note("end_of_speech", utterance)

    async def stop_playback(self) -> None:
        self._note("stop")

    async def hang_up(self) -> None:
        self._note("hang_up")


class Caller:
    """Sends 20 ms of 8 kHz audio every 20 ms: speech while ``speaking``, else quiet."""

    LOUD = tone(0.02, 8000, amplitude=0.3)
    QUIET = bytes(320)

    def __init__(self, send: Callable[[bytes], object]) -> None:
        self._send = send
        self.speaking = False
        self.silent = False  # sends no frames at all

    async def run(self) -> None:
        next_at = anyio.current_time()
        while True:
            if not self.silent:
                try:
                    await self._send(self.LOUD if self.speaking else self.QUIET)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return  # the caller hung up
            next_at += 0.02
            await anyio.sleep(max(0.0, next_at - anyio.current_time()))

    async def say(self, seconds: float) -> None:
        self.speaking = True
        await anyio.sleep(seconds)
        self.speaking = False
