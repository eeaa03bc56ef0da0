"""The line's side of a call: 20 ms frames played to the caller, paced in real time.

``Player`` keeps a queue of frames per utterance and sends one frame at each tick of
the event loop's shared 20 ms ticker (``pacing.FrameTicker``); a frame whose tick
rang while the process was busy goes at once, one that missed its slot entirely waits
for the next tick: frames never burst to catch up. It sends nothing when it has nothing: between answers the line is quiet without a
frame. ``stop`` drops everything queued at once (barge-in). ``finished(u)`` is an
event set when the last frame queued for utterance ``u`` has gone out, or was
dropped.

``Framer`` cuts synthesised audio into whole frames; the last, short one is padded
with silence, so no frame is ever empty or short.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import anyio

from adapters.voice.pacing import frame_ticker
from adapters.voice.transport import FRAME_BYTES, FRAME_SECONDS, CallTransport

__all__ = ["Framer", "Player"]


class Framer:
    """Cuts a stream of 16-bit PCM into ``FRAME_BYTES`` frames."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, pcm: bytes) -> list[bytes]:
        self._pending += pcm
        whole = len(self._pending) - len(self._pending) % FRAME_BYTES
        frames = [bytes(self._pending[i:i + FRAME_BYTES]) for i in range(0, whole, FRAME_BYTES)]
        del self._pending[:whole]
        return frames

    def flush(self) -> bytes | None:
        """The rest padded with silence to a whole frame, or None when nothing is left."""
        if not self._pending:
            return None
        frame = bytes(self._pending).ljust(FRAME_BYTES, b"\0")
        self._pending.clear()
        return frame


class Player:
    """Plays queued frames to ``transport`` every 20 ms. ``on_sent(utterance, frame)``
    is called after each frame went out."""

    def __init__(self, transport: CallTransport, on_sent: Callable[[int, bytes], None]) -> None:
        self._transport = transport
        self._on_sent = on_sent
        self._queue: deque[tuple[int, bytes | anyio.Event]] = deque()
        self._wake = anyio.Event()
        self._generation = 0  # moves on every stop, so a frame held across it is dropped
        #: Frames sent so far, and those sent after their tick had rung.
        self.frames_sent = 0
        self.late_frames = 0

    def play(self, utterance: int, frame: bytes) -> None:
        self._queue.append((utterance, frame))
        self._wake.set()

    def finished(self, utterance: int) -> anyio.Event:
        """An event set once everything queued so far for ``utterance`` has been sent
        (the transport is told with ``end_of_speech``) or dropped by ``stop``."""
        done = anyio.Event()
        self._queue.append((utterance, done))
        self._wake.set()
        return done

    def stop(self) -> None:
        """Drop every queued frame now; waiting ``finished`` events are set."""
        self._generation += 1
        while self._queue:
            _, item = self._queue.popleft()
            if isinstance(item, anyio.Event):
                item.set()

    async def run(self) -> None:
        """Send frames until cancelled, one at each tick of the shared ticker."""
        ticker = frame_ticker()
        last_tick: float | None = None  # of the frame before, while frames keep coming
        while True:
            if not self._queue:
                self._wake = anyio.Event()
                await self._wake.wait()
                last_tick = None  # after a quiet spell the next frame starts afresh
                continue
            utterance, item = self._queue.popleft()
            if isinstance(item, anyio.Event):
                # The utterance's last frame went out: mark the point, then report it.
                await self._transport.end_of_speech(utterance)
                item.set()
                continue
            generation = self._generation
            due = None if last_tick is None else last_tick + FRAME_SECONDS
            if due is not None and due <= ticker.clock() < due + FRAME_SECONDS:
                tick = due  # its tick rang while the process was busy: send it now
                self.late_frames += 1
            else:
                tick = await ticker.next_tick()
                if generation != self._generation:
                    continue  # stopped while this frame waited for its slot
            await self._transport.send_frame(item)
            self.frames_sent += 1
            self._on_sent(utterance, item)
            last_tick = tick
