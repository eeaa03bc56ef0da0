"""The line's side of a call: 20 ms frames played to the caller, paced in real time.

``Player`` keeps a short queue of ready frames for one call, tagged with their
utterance, and joins the event loop's shared ticker (``pacing.FrameTicker``): at each
ring its ``on_tick`` takes the next frame and writes it at once with the transport's
non-blocking ``frame_writer``, from the timer callback, without a task switch. A
transport that can only send by awaiting (the carrier's WebSocket) gets the frame
handed to the player's task instead, woken for it; until that send is done, later
slots go without a frame.

How many frames a ring sends (``Pacing``): each run of frames (from the first frame
queued after a quiet line until the queue empties) keeps to the call's own timeline,
one frame per slot from the slot it began in, plus the transport's ``lead_frames``
sent ahead. A ring after slots the process was too busy to ring sends the frames those
slots owed, but never more than ``max_per_ring`` at once, and a debt older than
``max_owed`` frames is forgiven (the utterance stretches; no frame is lost): the
telephone system plays what it is given as it comes, so a longer burst would be played
too fast. The carrier buffers what it is sent and plays it at the call's rate (its
``clear`` empties that buffer), so its transport asks for a lead: a busy moment then
costs the caller nothing. A transport that ``keeps_line_busy`` (AudioSocket: Asterisk
hangs up after 2 s without a frame) gets a frame of silence in every slot without
speech; on any other the line is quiet without a frame when nothing is queued.

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

__all__ = ["CATCH_UP_FRAMES", "MAX_OWED_FRAMES", "QUEUE_FRAMES", "STALLED_SECONDS", "Framer",
           "Pacing", "Player"]

from collections import deque
from collections.abc import Callable

import anyio

from adapters.voice.pacing import FrameTicker, frame_ticker
from adapters.voice.transport import (FRAME_BYTES, FRAME_SECONDS, CallTransport,
                                      FrameWriter, TransportBroken)

#: Frames queued ahead per call at most (2 s): ``play`` waits beyond this, and goes
#: on once half have gone out. A synthesiser that stalls (a remote one over a slow
#: network) thus has a second before the caller hears a gap, and a producer is woken
#: once a second of speech rather than twice.
QUEUE_FRAMES = 100
#: A peer that has read none of our audio for this long is gone (the same 5 s as a
#: peer that sends nothing).
STALLED_SECONDS = 5.0
#: Frames a ring may send beyond its own after slots the process missed: one, so a
#: late stretch is caught up at twice the call's rate, which a telephone system's
#: jitter buffer takes in its stride.
CATCH_UP_FRAMES = 1
#: Missed frames caught up at most (100 ms); an older debt stretches the utterance.
MAX_OWED_FRAMES = 5
_SILENCE = bytes(FRAME_BYTES)


class Pacing:
    """How many frames a run of speech may have sent by each slot (see the module's
    docstring): ``lead`` frames ahead of the call's timeline, at most ``max_per_ring``
    in one ring, and a debt of at most ``max_owed`` frames."""

    def __init__(self, lead: int = 0) -> None:
        self.lead = lead
        self.max_per_ring = 1 + CATCH_UP_FRAMES + lead
        self.max_owed = MAX_OWED_FRAMES + lead
        self._start: int | None = None  # the slot the run began in
        self._sent = 0  # frames of the run sent so far

    def due(self, slot: int) -> int:
        """How many frames may go out at ``slot``."""
        if self._start is None:
            self._start, self._sent = slot, 0
        owed = slot - self._start + 1 + self.lead - self._sent
        if owed > self.max_owed:
            self._start += owed - self.max_owed  # forgiven: the utterance stretches
            owed = self.max_owed
        if owed <= 0:
            return 0
        return owed if owed < self.max_per_ring else self.max_per_ring

    def sent(self, frames: int) -> None:
        self._sent += frames

    def pause(self) -> None:
        """Nothing is queued: the next frame begins a new run."""
        self._start = None


class Framer:
    """Cuts a stream of 16-bit PCM into ``FRAME_BYTES`` frames."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, pcm: bytes) -> list[bytes]:
        if self._pending:
            self._pending += pcm
            pcm = bytes(self._pending)
            self._pending.clear()
        elif type(pcm) is not bytes:
            pcm = bytes(pcm)  # a bytearray's slices would be bytearrays
        whole = len(pcm) - len(pcm) % FRAME_BYTES
        self._pending += pcm[whole:]
        # Slices of bytes: one copy a frame (of a bytearray it would be two).
        return [pcm[i:i + FRAME_BYTES] for i in range(0, whole, FRAME_BYTES)]

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
        self._write_now: FrameWriter | None = None
        #: for the task to send (a transport that sends by awaiting), with the
        #: generation they were handed in: a ``stop`` since then drops them unsent.
        #: An utterance of None is silence that keeps the line busy.
        self._handed: tuple[int, list[tuple[int | None, bytes]]] | None = None
        self.pacing = Pacing(transport.lead_frames)
        self._keeps_busy = transport.keeps_line_busy
        self._failure: Exception | None = None  # met at a tick, raised by the task
        self._generation = 0  # moves on every stop
        #: Frames sent so far (silence that keeps the line busy apart), and slots
        #: skipped because the peer was not keeping up.
        self.frames_sent = 0
        self.silence_sent = 0
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
        self.pacing.pause()
        self._make_room()

    def _make_room(self) -> None:
        room, self._room = self._room, None
        if room is not None:
            room.set()

    # -- the ticker's side

    def on_tick(self) -> bool:
        """Send this slot's frames, if any are ready (see the module's docstring)."""
        if self._handed is not None or self._failure is not None:
            return self._handed is not None
        queue = self._queue
        if not queue and self._keeps_busy and self._room is None:
            # Nothing to say on a line kept busy: most slots of a call.
            self.pacing.pause()
            return self._send_silence()
        ticker = self._ticker
        due = self.pacing.due(ticker.slot if ticker is not None else 0) if queue else 0
        taken: list[tuple[int | None, bytes]] = []
        while len(taken) < due and queue and type(queue[0][1]) is bytes:
            taken.append(queue.popleft())  # type: ignore[arg-type]
        self._frames_queued -= len(taken)
        if not taken and self._keeps_busy and (not queue or type(queue[0][1]) is not bytes):
            taken.append((None, _SILENCE))  # nothing to say: the line stays busy
        if not queue or type(queue[0][1]) is not bytes:
            self.pacing.pause()
        if taken:
            if not self._send(taken):
                return False
        if self._room is not None and self._frames_queued <= QUEUE_FRAMES // 2:
            self._make_room()
        if queue and type(queue[0][1]) is not bytes:
            self._work.set()  # the utterance's last frame went out
        # Rung again while frames wait (an utterance's end is the task's: it wakes the
        # ticker once done), or always for a line kept busy.
        return self._keeps_busy or bool(queue) and type(queue[0][1]) is bytes

    def _send(self, taken: list[tuple[int | None, bytes]]) -> bool:
        """Send the slot's frames; False once the player failed."""
        write = self._write_now
        if write is None:
            # Sent by the task; later slots wait for it.
            self._handed = (self._generation, taken)
            self.pacing.sent(sum(utterance is not None for utterance, _ in taken))
            self._work.set()
            return True
        try:
            for index, (utterance, frame) in enumerate(taken):
                if not write(frame):
                    # The peer is behind: the rest waits for a later slot.
                    self._keep(taken[index:])
                    return self._refused()
                self._refused_in_a_row = 0
                if utterance is None:
                    self.silence_sent += 1
                else:
                    self.frames_sent += 1
                    self.pacing.sent(1)
                    self._on_sent(utterance, frame)
        except Exception as exc:
            self._fail(exc)
            return False
        return True

    def _send_silence(self) -> bool:
        """``_send`` of one frame of silence, without the bookkeeping of speech."""
        write = self._write_now
        if write is None:
            return self._send([(None, _SILENCE)])
        try:
            if not write(_SILENCE):
                return self._refused()
        except Exception as exc:
            self._fail(exc)
            return False
        self._refused_in_a_row = 0
        self.silence_sent += 1
        return True

    def _refused(self) -> bool:
        """A slot the peer could not take; False once it has taken none for
        ``STALLED_SECONDS`` (the player failed)."""
        self.slots_refused += 1
        self._refused_in_a_row += 1
        if self._refused_in_a_row * FRAME_SECONDS >= STALLED_SECONDS:
            self._fail(_stalled())
            return False
        return True

    def _keep(self, unsent: list[tuple[int | None, bytes]]) -> None:
        speech = [(utterance, frame) for utterance, frame in unsent if utterance is not None]
        self._queue.extendleft(reversed(speech))  # type: ignore[arg-type]
        self._frames_queued += len(speech)

    def forget_listener(self) -> None:
        """Stop calling ``on_sent``: its owner is done (and, often holding this player,
        would otherwise be kept in a cycle with it)."""
        self._on_sent = _ignore_sent

    def _fail(self, exc: Exception) -> None:
        self._failure = exc
        self._work.set()

    def tick_failed(self, exc: Exception) -> None:
        """The ticker's word that ``on_tick`` raised: the task ends with it."""
        self._fail(exc)

    # -- the player's task

    async def run(self) -> None:
        """Play until cancelled. Raises what a send raised (``TransportBroken``)."""
        self._write_now = self._transport.frame_writer()
        ticker = self._ticker = self._given_ticker or frame_ticker()
        ticker.join(self)
        if self._keeps_busy:
            ticker.wake()
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
                generation, frames = self._handed
                for utterance, frame in frames:
                    if generation != self._generation:
                        break  # a barge-in since they were handed: dropped unsent
                    with anyio.move_on_after(STALLED_SECONDS) as waited:
                        await self._transport.send_frame(frame)
                    if waited.cancelled_caught:
                        raise _stalled()
                    if utterance is None:
                        self.silence_sent += 1
                    else:
                        self.frames_sent += 1
                        self._on_sent(utterance, frame)
                self._handed = None
                if self._keeps_busy:
                    self._ticker.wake()  # type: ignore[union-attr]  # set while running
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
