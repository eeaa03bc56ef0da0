"""The line's side of a call: 20 ms frames played to the caller, paced in real time.

``Player`` keeps a short queue of ready frames for one call, tagged with their
utterance, and joins the event loop's shared ticker (``pacing.FrameTicker``): at each
ring its ``on_tick`` takes the next frame and writes it at once with the transport's
non-blocking ``frame_writer``, from the timer callback, without a task switch. A
transport that can only send by awaiting (the carrier's WebSocket) gets the frame
handed to the player's task instead, woken for it; until that send is done, later
slots go without a frame. The ticker's rules hold either way: at most one frame per
call in a slot, nothing bursts to catch up, a slot missed while the process was busy
is skipped (the utterance stretches; no frame is lost). The line is quiet without a
frame when nothing is queued.

Producers ``await play(utterance, frames)``: it waits while ``QUEUE_FRAMES`` frames
are queued (flow control, so memory stays small and a long answer is synthesised as
it is played) and goes on once half have gone out. ``finished(u)`` queues an event
that the player's task sets when the frames queued before it have gone out: it
first tells the transport (``end_of_speech``: the carrier marks the point and waits
for the mark to come back), and the next utterance's frames wait for it. ``stop``
drops everything queued at once (barge-in), sets waiting ``finished`` events, and
drops the frames of producers that were waiting for room.

When the peer does not keep up — the kernel's send buffer is full and the
connection's own small buffer over its limit, so the frame writer refuses — the slot
goes without a frame and the frame is kept for the next one: sending more would only
queue behind what the caller has not read yet. A peer that reads nothing for
``STALLED_SECONDS`` (every slot refused, or one send awaited that long) is taken as
gone: the player raises ``TransportBroken``, as for a reset connection, rather than
hold the call open with its audio going nowhere.

``Framer`` cuts synthesised audio into whole frames; the last, short one is padded
with silence, so no frame is ever empty or short.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import anyio

from adapters.voice.pacing import FrameTicker, frame_ticker
from adapters.voice.transport import (FRAME_BYTES, FRAME_SECONDS, CallTransport,
                                      TransportBroken)

__all__ = ["QUEUE_FRAMES", "STALLED_SECONDS", "Framer", "Player"]

#: Frames queued ahead per call at most (1 s): ``play`` waits beyond this, and goes
#: on once half have gone out.
QUEUE_FRAMES = 50
#: A peer that has read none of our audio for this long is gone (the same 5 s as a
#: peer that sends nothing).
STALLED_SECONDS = 5.0


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
    """Plays queued frames to ``transport`` every 20 ms while ``run`` runs.
    ``on_sent(utterance, frame)`` is called after each frame went out."""

    def __init__(self, transport: CallTransport, on_sent: Callable[[int, bytes], None],
                 ticker: FrameTicker | None = None) -> None:
        self._transport = transport
        self._given_ticker = ticker  # else the event loop's (``frame_ticker``)
        self._on_sent = on_sent
        self._queue: deque[tuple[int, bytes | anyio.Event]] = deque()
        self._frames_queued = 0
        self._room: anyio.Event | None = None  # what producers wait on while full
        self._work = anyio.Event()  # wakes the task: an end of speech, a frame to send
        self._ticker: FrameTicker | None = None
        self._write_now: Callable[[bytes], bool] | None = None
        #: for the task to send (a transport that sends by awaiting), with the
        #: generation it was handed in: a ``stop`` since then drops it unsent
        self._handed: tuple[int, int, bytes] | None = None
        self._failure: Exception | None = None  # met at a tick, raised by the task
        self._generation = 0  # moves on every stop
        #: Frames sent so far, and slots skipped because the peer was not keeping up.
        self.frames_sent = 0
        self.slots_refused = 0
        self._refused_in_a_row = 0

    # -- what producers use

    @property
    def frames_queued(self) -> int:
        return self._frames_queued

    async def play(self, utterance: int, frames: list[bytes]) -> bool:
        """Queue ``frames``, waiting while ``QUEUE_FRAMES`` are queued. False when
        ``stop`` came while it waited: the frames not yet queued are dropped."""
        generation = self._generation
        queue = self._queue
        start = 0
        while start < len(frames):
            room = QUEUE_FRAMES - self._frames_queued
            if room <= 0:
                if self._room is None:
                    self._room = anyio.Event()
                await self._room.wait()
                if generation != self._generation:
                    return False
                continue
            taken = frames[start:start + room]
            start += len(taken)
            was_empty = not queue
            queue.extend([(utterance, frame) for frame in taken])
            self._frames_queued += len(taken)
            if was_empty and self._ticker is not None:
                self._ticker.wake()
        return True

    def finished(self, utterance: int) -> anyio.Event:
        """An event set once everything queued so far for ``utterance`` has been sent
        (the transport is told with ``end_of_speech``) or dropped by ``stop``."""
        done = anyio.Event()
        self._queue.append((utterance, done))
        if len(self._queue) == 1:
            self._work.set()
        return done

    def stop(self) -> None:
        """Drop every queued frame now; waiting ``finished`` events are set."""
        self._generation += 1
        for _, item in self._queue:
            if type(item) is not bytes:
                item.set()  # type: ignore[union-attr]
        self._queue.clear()
        self._frames_queued = 0
        self._make_room()

    def _make_room(self) -> None:
        room, self._room = self._room, None
        if room is not None:
            room.set()

    # -- the ticker's side

    def on_tick(self) -> bool:
        """Send the next frame, if one is ready (see the module's docstring)."""
        queue = self._queue
        if not queue or self._handed is not None or self._failure is not None:
            return self._handed is not None
        utterance, frame = queue[0]
        if type(frame) is not bytes:
            return False  # an utterance ended: the task takes it and asks for ticks again
        queue.popleft()
        self._frames_queued -= 1
        write = self._write_now
        if write is None:
            # Sent by the task; later slots wait for it.
            self._handed = (self._generation, utterance, frame)
            self._work.set()
        else:
            try:
                if not write(frame):
                    # The peer is behind: this slot goes without, the frame is kept.
                    queue.appendleft((utterance, frame))
                    self._frames_queued += 1
                    self.slots_refused += 1
                    self._refused_in_a_row += 1
                    if self._refused_in_a_row * FRAME_SECONDS >= STALLED_SECONDS:
                        self._fail(_stalled())
                        return False
                    return True
                self._refused_in_a_row = 0
                self._sent(utterance, frame)
            except Exception as exc:
                self._fail(exc)
                return False
        if self._room is not None and self._frames_queued <= QUEUE_FRAMES // 2:
            self._make_room()
        if queue and type(queue[0][1]) is not bytes:
            self._work.set()  # the utterance's last frame went out
        return True

    def forget_listener(self) -> None:
        """Stop calling ``on_sent``: its owner is done (and, often holding this player,
        would otherwise be kept in a cycle with it)."""
        self._on_sent = _ignore_sent

    def _sent(self, utterance: int, frame: bytes) -> None:
        self.frames_sent += 1
        self._on_sent(utterance, frame)

    def _fail(self, exc: Exception) -> None:
        self._failure = exc
        self._work.set()

    def tick_failed(self, exc: Exception) -> None:
        """The ticker's word that ``on_tick`` raised: the task ends with it."""
        self._fail(exc)

    # -- the player's task

    async def run(self) -> None:
        """Play until cancelled. Raises what a send raised (``TransportBroken``)."""
        writer = getattr(self._transport, "frame_writer", None)
        self._write_now = writer() if writer is not None else None
        ticker = self._ticker = self._given_ticker or frame_ticker()
        ticker.join(self)
        try:
            if ticker.needs_driver:
                await self._serve_driving(ticker)
            else:
                await self._serve()
        finally:
            ticker.leave(self)
            self._ticker = None

    async def _serve_driving(self, ticker: FrameTicker) -> None:
        """``_serve`` beside the task ringing the ticker; a failure is raised as
        itself, not inside an exception group."""
        failure: Exception | None = None
        async with anyio.create_task_group() as driving:
            driving.start_soon(ticker.drive)
            try:
                await self._serve()
            except Exception as exc:
                failure = exc
            driving.cancel_scope.cancel()
        if failure is not None:
            raise failure

    async def _serve(self) -> None:
        queue = self._queue
        while True:
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure
            if self._handed is not None:
                generation, utterance, frame = self._handed
                if generation == self._generation:  # no barge-in since it was handed
                    with anyio.move_on_after(STALLED_SECONDS) as waited:
                        await self._transport.send_frame(frame)
                    if waited.cancelled_caught:
                        raise _stalled()
                    self._sent(utterance, frame)
                self._handed = None
                continue
            if queue and type(queue[0][1]) is not bytes:
                utterance, done = queue.popleft()
                await self._transport.end_of_speech(utterance)
                done.set()  # type: ignore[union-attr]
                continue
            if queue:
                self._ticker.wake()  # type: ignore[union-attr]  # set while running
            self._work = anyio.Event()
            await self._work.wait()


def _stalled() -> TransportBroken:
    return TransportBroken(f"the peer has read none of its audio for {STALLED_SECONDS:g} s")


def _ignore_sent(utterance: int, frame: bytes) -> None:
    pass
