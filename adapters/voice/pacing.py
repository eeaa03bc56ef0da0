"""The 20 ms beat every call's playback keeps: one shared ticker per event loop.

A process plays hundreds of calls at once, each a frame every 20 ms. Waking a task
per call per frame costs a task switch per frame, and sleeping each call towards its
own slots lets every call drift on its own as the loop gets busy. Instead, each call's
player joins the event loop's ``FrameTicker``: one timer rings on a grid of slots
``FRAME_SECONDS`` apart, and at each ring the ticker calls every member's ``on_tick``
in the order they joined, from the timer callback itself, where each sends its next
frame, if it has one, with a non-blocking write. No task is woken per frame, and each
call's frame leaves at about the same offset from the ring at every tick, so the
interval between two of its frames stays close to 20 ms even when sending every
call's frame takes several milliseconds.

The rules of the grid:

* a slot is rung at most once, so no call ever sends two frames in one slot (the
  loop's timers may ring a little before their time: the slot is the one armed for);
* a ring that comes late, within its slot (the process was busy), sends at once;
* a ring later than its whole slot rings the slot it finds itself in: the slots
  in between go without frames, and nothing bursts to catch up;
* the timer runs only while some member has frames waiting (``on_tick`` says so,
  and ``wake`` starts it again) or work was deferred to it, so an idle process has
  no timer at all.

``defer`` runs work at the next ring after every member's frame has gone out: the
caller audio read in the connections' read callbacks (``audiosocket.py``) is handed
to the sessions there, so the read callbacks stay short and a burst of them does not
hold the ring up, and the frames go out before the work of the tick.

Members must not raise from ``on_tick`` (a player keeps its failure for its own
task); a member that does anyway is logged, left out of the ring and told through its
``tick_failed``, so one call's fault cannot stop the others' playback nor leave its own
call waiting for ticks that no longer come.

While it has frames to ring, the ticker holds the collection schedule it was given
(``collection.py``; the AudioSocket listener of a serving process gives the event
loop's ticker its own with ``collect_with``): after each ring, once the slot's frames
are out, the schedule runs the garbage collection that is due, so its pause falls in
the rest of the slot rather than between two calls' frames. A ticker given none
leaves collection to CPython.

On an event loop other than asyncio (trio), each player gets a ticker of its own,
driven by ``drive`` in a task, which sleeps towards the same grid.
``loop_clock`` is the running loop's own clock, read without asking which event loop
runs each time (``anyio.current_time`` does, through ``sniffio``).
"""

from __future__ import annotations

__all__ = ["FrameTicker", "TickMember", "frame_ticker", "loop_clock"]

import asyncio
import logging
import math
import weakref
from collections.abc import Callable
from typing import Protocol

import anyio
import sniffio

from adapters.voice.collection import CollectionSchedule, NoSchedule
from adapters.voice.transport import FRAME_SECONDS

log = logging.getLogger("svc.voice.pacing")


def loop_clock() -> Callable[[], float]:
    """The running event loop's monotonic clock (the one ``anyio.current_time`` reads)."""
    if sniffio.current_async_library() == "asyncio":
        return asyncio.get_running_loop().time
    return anyio.current_time


class TickMember(Protocol):
    def on_tick(self) -> bool:
        """Send this slot's frame, if there is one; True while frames wait for later
        slots. Called from the ticker's timer callback, outside any task."""
        ...

    def tick_failed(self, exc: Exception) -> None:
        """``on_tick`` raised ``exc``; the member is no longer rung."""
        ...


class FrameTicker:
    """Rings a grid of ``FRAME_SECONDS`` slots while any member has frames waiting."""

    def __init__(self, *, driven: bool = False,
                 collection: CollectionSchedule | NoSchedule | None = None) -> None:
        """``driven``: rung by ``drive`` in a task, as off asyncio, where it always is.
        ``collection``: the schedule to hold while playing (else none: CPython's)."""
        self.clock = loop_clock()
        self._collection = collection if collection is not None else NoSchedule()
        on_asyncio = sniffio.current_async_library() == "asyncio"
        self._loop = asyncio.get_running_loop() if on_asyncio and not driven else None
        self._members: dict[TickMember, None] = {}  # in the order they joined
        self._order: tuple[TickMember, ...] = ()
        self._timer: asyncio.TimerHandle | None = None
        self._wanted: anyio.Event | None = None  # what ``drive`` waits on, off asyncio
        self._wanted_now = False
        self._deferred: list[Callable[[], None]] = []
        #: The number of the slot rung last (its time is ``slot * FRAME_SECONDS``).
        self.slot = -1
        #: Rings so far, and the slots that went without a ring (the process was busy).
        self.rings = 0
        self.slots_skipped = 0

    @property
    def needs_driver(self) -> bool:
        """True off asyncio: ``drive`` must run in a task for the ticker to ring."""
        return self._loop is None

    @property
    def collection(self) -> CollectionSchedule | NoSchedule:
        """The schedule this ticker holds while it plays."""
        return self._collection

    def collect_with(self, collection: CollectionSchedule | NoSchedule) -> None:
        """Hold ``collection`` from now on; the schedule held so far lets go (the
        listener that made it is starting or stopping, calls may be playing)."""
        held, self._collection = self._collection, collection
        held.release(self)
        for _ in self._members:
            collection.joined()
        if self._members and (self._timer is not None or self._wanted_now):
            collection.hold(self)

    def join(self, member: TickMember) -> None:
        if self.needs_driver and self._members:
            # Each player runs ``drive`` for its ticker; two drivers would ring twice.
            raise ValueError("a ticker rung by a task serves one member")
        self._members[member] = None
        self._order = tuple(self._members)
        self._collection.joined()

    def leave(self, member: TickMember) -> None:
        if self._members.pop(member, 0) is None:
            self._order = tuple(self._members)
            self._collection.left()
            if not self._members:
                # Nobody is left to play (the loop may be closing): nothing holds
                # collection back; a ring still due (deferred work) is harmless.
                self._collection.release(self)

    def wake(self) -> None:
        """A member has frames waiting: ring the next slot, unless already armed."""
        if self._members:
            self._collection.hold(self)
        if self._loop is None:
            self._wanted_now = True
            if self._wanted is not None:
                self._wanted.set()
            return
        if self._timer is None:
            slot = self._next_slot()
            self._timer = self._loop.call_at(slot * FRAME_SECONDS, self._ring, slot)

    def defer(self, work: Callable[[], None]) -> None:
        """Run ``work`` at the next ring, once every member's frame has gone out (work
        that can wait a tick: caller audio read in a callback)."""
        self._deferred.append(work)
        self.wake()

    def _next_slot(self) -> int:
        # Never a slot rung already, even if the clock reads a little short of it.
        return max(math.floor(self.clock() / FRAME_SECONDS) + 1, self.slot + 1)

    def _ring(self, slot: int) -> None:
        self._timer = None
        busy = self.ring(slot)
        if busy and self._loop is not None and self._timer is None:
            self._timer = self._loop.call_at((self.slot + 1) * FRAME_SECONDS, self._ring,
                                             self.slot + 1)
        if self._timer is None:
            self._collection.release(self)

    def ring(self, slot: int) -> bool:
        """Ring ``slot`` (or, when its time has wholly passed, the slot the clock is in
        now): each member's ``on_tick`` once, in order. True while any member still
        has frames waiting."""
        slot = max(slot, math.floor(self.clock() / FRAME_SECONDS), self.slot + 1)
        if self.slot >= 0:
            self.slots_skipped += slot - self.slot - 1
        self.slot = slot
        self.rings += 1
        busy = False
        # Called back by the loop, outside any task: tell sniffio (and so anyio, should
        # a member start a task or make an event) which event loop this is.
        token = sniffio.current_async_library_cvar.set(
            "asyncio" if self._loop is not None else sniffio.current_async_library())
        try:
            for member in self._order:
                try:
                    if member.on_tick():
                        busy = True
                except Exception as exc:
                    log.exception("a call's playback failed at its tick")
                    self.leave(member)
                    member.tick_failed(exc)
            deferred, self._deferred = self._deferred, []
            for work in deferred:
                try:
                    work()
                except Exception:
                    log.exception("work deferred to a tick failed")
        finally:
            sniffio.current_async_library_cvar.reset(token)
        self._collection.after_ring((self.slot + 1) * FRAME_SECONDS - self.clock())
        return busy

    async def drive(self) -> None:
        """Ring the grid from a task (off asyncio), while members have frames waiting."""
        while True:
            if not self._wanted_now:
                self._wanted = anyio.Event()
                await self._wanted.wait()
                self._wanted = None
            slot = self._next_slot()
            await anyio.sleep(slot * FRAME_SECONDS - self.clock())
            self._wanted_now = self.ring(slot)
            if not self._wanted_now:
                self._collection.release(self)


_TICKERS: weakref.WeakKeyDictionary[object, FrameTicker] = weakref.WeakKeyDictionary()


def frame_ticker() -> FrameTicker:
    """The ticker of the running event loop (made at its first use); off asyncio a
    new one, to be driven by its own task."""
    if sniffio.current_async_library() != "asyncio":
        return FrameTicker()
    loop = asyncio.get_running_loop()
    ticker = _TICKERS.get(loop)
    if ticker is None:
        ticker = _TICKERS[loop] = FrameTicker()
    return ticker
