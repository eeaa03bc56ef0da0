"""One simulated call's audio, whatever the transport: the 20 ms loop and the report.

``converse`` runs the call: every 20 ms, on an absolute schedule so lateness never
accumulates, the caller's next frame goes out through the transport's ``Link`` and
one frame of what the line queued is played into the caller's ear. A second task
reads the line until it ends the call. ``Ear`` keeps what was heard (the recording),
the stretches of the line's speech, when each frame arrived, and the time from the
end of each of the caller's turns to the first audible reply.
"""

from __future__ import annotations

__all__ = ["CallReport", "Ear", "Link", "Reply", "Timing", "converse", "transcribe"]

from dataclasses import dataclass, field
from typing import Protocol

import anyio

from adapters.call_simulator.audio import (
    CALL_RATE,
    FRAME_SECONDS,
    audible,
    frames_of,
)
from adapters.call_simulator.script import Action, Caller, Turn
from adapters.speech import Recogniser, SpeechUnavailable

#: Quiet shorter than this inside the line's speech (between words and sentences)
#: does not split it into two replies.
REPLY_GAP_S = 0.7


@dataclass
class Reply:
    """One stretch of the line's speech as the caller heard it (seconds from the
    start of the call's audio), its audio as the line sent it, and what recognition
    made of it."""

    started_s: float
    ended_s: float
    pcm: bytes = field(repr=False, default=b"")
    transcript: str | None = None


@dataclass
class Timing:
    """From the end of one of the caller's turns to the first audible audio of the
    line that arrived after it (``None``: the line said nothing more)."""

    turn: str
    speech_ended_s: float
    first_reply_s: float | None = None

    @property
    def latency_ms(self) -> float | None:
        if self.first_reply_s is None:
            return None
        return (self.first_reply_s - self.speech_ended_s) * 1000


@dataclass
class CallReport:
    """What happened on one simulated call."""

    transport: str
    answered: bool = False
    #: ``caller`` (the script ran out or hung up), ``line`` (the service ended the
    #: call), ``refused`` (never answered), ``fault`` (the service broke the protocol),
    #: ``inactivity`` (Asterisk gave up: no audio from the service for 2 s).
    ended_by: str = ""
    call_reference: str = ""
    transfer_to: str | None = None
    fault: str | None = None
    #: What the caller heard, 8 kHz signed linear, on the call's own timeline.
    heard: bytes = field(repr=False, default=b"")
    replies: list[Reply] = field(default_factory=list)
    timings: list[Timing] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    #: Arrival time of every audio frame or message from the line.
    arrivals: list[float] = field(repr=False, default_factory=list)
    frames_received: int = 0
    #: Audio frames that were not 20 ms long.
    odd_frames: int = 0
    clears: int = 0
    marks: int = 0
    #: The sample rates the line's audio came at (AudioSocket: its frames' kinds).
    rates: set[int] = field(default_factory=set)

    @property
    def transcript(self) -> str:
        return " ".join(reply.transcript for reply in self.replies if reply.transcript)


class Link(Protocol):
    """One transport's audio connection, as ``converse`` drives it."""

    async def send(self, action: Action, frame: bytes, digit: str, at_ms: int) -> None:
        """Send the caller's frame (and key) for this 20 ms; nothing for ``NOTHING``."""

    def play(self) -> tuple[bytes, bytes]:
        """What the caller hears in this 20 ms — 320 bytes of 8 kHz signed linear — and
        the part of it the line sent (without the silence of an empty queue)."""

    async def receive(self, ear: Ear, clock: Clock) -> None:
        """Read the line until it ends the call (or breaks the protocol)."""

    async def hang_up(self) -> None:
        """The caller hangs up."""

    def drain(self) -> bytes:
        """The audio still queued for the caller once the line ended the call."""


class Clock:
    """Seconds since the call's audio started, on the event loop's clock."""

    def __init__(self) -> None:
        self.origin = anyio.current_time()

    def now(self) -> float:
        return anyio.current_time() - self.origin


class Ear:
    """Collects what the caller heard and when the line's audio arrived."""

    def __init__(self, report: CallReport) -> None:
        self.report = report
        self._heard = bytearray()
        self._line_audio = bytearray()
        self._waiting: list[Timing] = []
        self._reply: Reply | None = None
        self._reply_start = 0
        self._reply_end = 0
        self._quiet_since: float | None = None

    def turn_ended(self, turn: Turn) -> None:
        timing = Timing(turn.label, turn.ended_s)
        self.report.timings.append(timing)
        self._waiting.append(timing)

    def arrived(self, now_s: float, pcm: bytes, *, odd: bool = False) -> None:
        """Audio from the line arrived (it is queued to play)."""
        self.report.arrivals.append(now_s)
        self.report.frames_received += 1
        self.report.odd_frames += odd
        if self._waiting and audible(pcm):
            for timing in self._waiting:
                timing.first_reply_s = now_s
            self._waiting.clear()

    def heard(self, now_s: float, pcm: bytes, line_part: bytes | None = None) -> bool:
        """The caller heard one frame, of which ``line_part`` came from the line (all of
        it when not given); returns whether it carried the line's speech."""
        self._heard += pcm
        self._line_audio += pcm if line_part is None else line_part
        speaking = audible(pcm)
        if speaking:
            if self._reply is None:
                self._reply = Reply(now_s, now_s, b"")
                self._reply_start = len(self._line_audio) - len(
                    pcm if line_part is None else line_part)
            self._reply.ended_s = now_s + FRAME_SECONDS
            self._reply_end = len(self._line_audio)
            self._quiet_since = None
        elif self._reply is not None:
            if self._quiet_since is None:
                self._quiet_since = now_s
            if now_s - self._quiet_since >= REPLY_GAP_S:
                self._close_reply()
        return speaking

    def finish(self) -> CallReport:
        if self._reply is not None:
            self._close_reply()
        self.report.heard = bytes(self._heard)
        return self.report

    def _close_reply(self) -> None:
        reply = self._reply
        assert reply is not None
        # Recognition hears the line's audio without the gaps a late frame leaves on
        # the call's timeline.
        reply.pcm = bytes(self._line_audio[self._reply_start:self._reply_end])
        self.report.replies.append(reply)
        self._reply = None
        self._quiet_since = None


async def converse(link: Link, caller: Caller, report: CallReport) -> CallReport:
    """Run the call's audio until the caller hangs up or the line ends the call."""
    ear = Ear(report)
    clock = Clock()
    line_ended = anyio.Event()

    async def read_line() -> None:
        try:
            await link.receive(ear, clock)
        finally:
            line_ended.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_line)
        heard_speech = False
        tick = 0
        while True:
            now_s = clock.now()
            if line_ended.is_set():
                caller.line_ended()
                # What the line queued before ending still reaches the caller's ear.
                for index, frame in enumerate(frames_of(link.drain())):
                    ear.heard(now_s + index * FRAME_SECONDS, frame)
                report.ended_by = report.ended_by or "line"
                break
            action, frame = caller.next_frame(now_s, heard_speech)
            for turn in caller.turns[len(report.turns):]:
                report.turns.append(turn)
                ear.turn_ended(turn)
            if action is Action.HANG_UP:
                report.ended_by = "caller"
                await link.hang_up()
                break
            await link.send(action, frame, caller.digit, round(now_s * 1000))
            heard_speech = ear.heard(now_s, *link.play())
            tick += 1
            await anyio.sleep_until(clock.origin + tick * FRAME_SECONDS)
        tasks.cancel_scope.cancel()
    return ear.finish()


async def transcribe(report: CallReport, recogniser: Recogniser) -> None:
    """Fill each reply's transcript; a recogniser that fails leaves them ``None``."""
    for reply in report.replies:
        try:
            reply.transcript = (await recogniser.transcribe(reply.pcm, CALL_RATE)).strip()
        except SpeechUnavailable:
            return
