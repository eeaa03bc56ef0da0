"""Garbage collection kept out of the way of calls' audio frames.

CPython's cyclic collector runs when allocations pass its thresholds, wherever the
process happens to be: in the middle of the ticker sending 500 calls' frames, say. A
young collection costs up to a few milliseconds there; a full one walks every object
the live calls hold (50–70 ms at 500 calls), and no frame goes out meanwhile, so every
call misses three slots. A process serving calls therefore runs its collections
itself, on the ticker's beat (``CollectionSchedule``):

* While any ticker is playing, automatic collection is off. After each ring, once
  every frame of the slot has gone out, the schedule collects the young generation:
  what the slot allocated, so the pause is short and lands in the rest of the slot
  instead of between two calls' frames. Every ``MIDDLE_EVERY`` rings it collects the
  middle generation too, and every ``OLD_EVERY`` rings the old one (``generation_due``).
  CPython's own thresholds would not do here: they count allocations net of frees, so
  where calls come and go (their old objects freed) the young generation grows to tens
  of thousands of objects before a collection, and that collection takes 5–20 ms.
* The old generation is kept small, so that no collection walks the live calls: after
  each old collection, ``gc.freeze`` moves what survived it, the live calls among it,
  to the permanent generation, which no collection walks. An old collection then walks
  only what survived the last ``OLD_EVERY`` rings, however many calls are live.
* What is frozen is never collected, so a call must let go of its objects as it ends
  without the collector's help (``adapters/voice/session.py``: its tasks end quietly
  when the call's end cancels them, its player forgets it), and an ended call leaves
  nothing frozen behind (one ended by a failure, rare, is left to the sweep). Anything else that becomes garbage after
  being frozen waits for a sweep — ``gc.unfreeze``, a full collection of everything,
  then ``gc.freeze`` again. A sweep runs when no ticker is playing (no caller hears the
  pause, though requests and caller audio wait for it), a call has ended since the
  last one and that was ``IDLE_SWEEP_GAP_SECONDS`` ago at least; while calls play, only once the
  process's resident memory has more than doubled since the last sweep, and by at
  least ``GROWTH_AT_LEAST`` (``sweep_due``): such a sweep pauses every call's audio
  once (160 ms at 500 calls), and it is logged.

Nothing is global here: the AudioSocket listener of a serving process makes its
schedule as it starts (``svc serve`` and the call-load benchmark's server ask it to)
and gives it to the event loop's ticker, which every call's player joins; the
schedule's ``close``, as the listener stops, gives collection back to CPython and
unfreezes what it froze. Any other ticker holds a ``NoSchedule``: collection as
CPython does it. As the schedule starts, ``freeze_start_up`` puts what the process
made so far (the modules, the application, its pools) out of the collector's sight,
so that no full collection walks it while calls play or requests are served.
"""

from __future__ import annotations

__all__ = ["GROWTH_AT_LEAST", "IDLE_SWEEP_GAP_SECONDS", "MIDDLE_EVERY", "OLD_EVERY", "POSTPONED_AT_MOST", "SLACK_KEPT",
           "CollectionSchedule", "CollectionStats", "NoSchedule", "generation_due",
           "resident_bytes", "sweep_due"]

import gc
import logging
import math
import os
import time

from adapters.voice.transport import FRAME_SECONDS

log = logging.getLogger("svc.voice.collection")

#: The middle generation is collected every this many rings (200 ms), the old one
#: (and what survives it frozen) every this many (2 s).
MIDDLE_EVERY = 10
OLD_EVERY = 100
#: A collection runs after a ring only if this much of the slot would be left after it
#: (by what it took last time), for the loop's other work before the next ring; else it
#: waits, for this many rings at most.
SLACK_KEPT = 0.002
POSTPONED_AT_MOST = 5
#: A sweep while calls play waits for the resident memory to double since the last
#: sweep, and by at least this.
GROWTH_AT_LEAST = 256 * 2**20
#: Sweeps while nothing plays are this far apart at least: a line whose calls all
#: hang up at once sweeps once, not once a call.
IDLE_SWEEP_GAP_SECONDS = 60.0
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int | None:
    """This process's resident memory, where the system tells it cheaply (Linux's
    ``/proc``); None elsewhere, and the rule on memory is then not applied."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return None


def generation_due(ring: int) -> int:
    """The generation to collect after the ``ring``-th ring (counted from 1)."""
    if ring % OLD_EVERY == 0:
        return 2
    if ring % MIDDLE_EVERY == 0:
        return 1
    return 0


def sweep_due(*, playing: bool, ended_since_sweep: int, seconds_since_sweep: float,
              resident: int | None, resident_after_sweep: int | None) -> bool:
    """Whether to unfreeze and collect everything now (see the module's docstring).
    ``resident``: the resident memory now, and just after the last sweep (bytes)."""
    if resident is not None and resident_after_sweep is not None and (
            resident - resident_after_sweep > max(resident_after_sweep, GROWTH_AT_LEAST)):
        return True
    return (not playing and ended_since_sweep > 0
            and seconds_since_sweep >= IDLE_SWEEP_GAP_SECONDS)


class CollectionStats:
    """What the schedule did, for an operator or a benchmark to read."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]  # by generation, on the ticker's beat
        self.sweeps = 0
        self.forced_sweeps = 0  # sweeps while calls were playing
        self.postponed = 0  # collections that waited a ring for room in the slot
        self.longest_in_play_ms = 0.0  # the longest pause a playing call met


class CollectionSchedule:
    """Runs the process's collections on the tickers' beat (module docstring)."""

    def __init__(self, clock=time.perf_counter) -> None:
        self._clock = clock
        self._playing: set[object] = set()  # tickers with frames to ring
        self._was_enabled = False  # automatic collection, before the first ticker played
        self._rings = 0  # rings whose collection has run, while playing
        self._postponed = 0  # rings in a row whose collection waited
        self._took = [0.0, 0.0, 0.0]  # what each generation's last collection took (s)
        self._resident_after_sweep = resident_bytes()
        self._swept_at = -math.inf
        self.players = 0  # calls joined to a ticker now
        self.ended_since_sweep = 0
        self.stats = CollectionStats()
        self._closed = False

    def freeze_start_up(self) -> None:
        """Collect, then freeze what survived: what the process made to start lives as
        long as it does, and no collection need walk it again (a full one took 60 ms)."""
        if not self._closed:
            gc.collect()
            gc.freeze()

    def close(self) -> None:
        """Give collection back to CPython: automatic collection as it was before a
        ticker first played, and everything frozen unfrozen (nothing would sweep it
        any more). The schedule does nothing from then on."""
        self._closed = True
        if self._playing:
            self._playing.clear()
            if self._was_enabled:
                gc.enable()
        gc.unfreeze()

    @property
    def playing(self) -> bool:
        return bool(self._playing)

    # -- what tickers tell

    def joined(self) -> None:
        self.players += 1

    def left(self) -> None:
        self.players -= 1
        self.ended_since_sweep += 1
        if not self._playing and not self._closed and self._sweep_due():
            # The call's last ring released the ticker before its player left.
            self._sweep()

    def hold(self, ticker: object) -> None:
        """``ticker`` plays: automatic collection stays off until no ticker does."""
        if self._closed:
            return
        if not self._playing:
            self._was_enabled = gc.isenabled()
            gc.disable()
        self._playing.add(ticker)

    def release(self, ticker: object) -> None:
        """``ticker`` has nothing left to ring."""
        if ticker not in self._playing:
            return
        self._playing.discard(ticker)
        if self._playing:
            return
        if self._sweep_due():
            self._sweep()
        if self._was_enabled:
            gc.enable()

    def after_ring(self, time_left: float = FRAME_SECONDS) -> None:
        """Every frame of the slot is out: collect what is due, in the slot's rest
        (``time_left`` seconds until the next ring). A collection that would not fit
        there, by what it took last time, waits for a later ring, up to
        ``POSTPONED_AT_MOST`` of them."""
        if not self._playing:
            return
        generation = generation_due(self._rings + 1)
        if (time_left - self._took[generation] < SLACK_KEPT
                and self._postponed < POSTPONED_AT_MOST):
            self._postponed += 1
            self.stats.postponed += 1
            return
        self._rings += 1
        self._postponed = 0
        started = self._clock()
        gc.collect(generation)
        if generation == 2:
            gc.freeze()
        took = self._clock() - started
        self._took[generation] = took
        self.stats.collections[generation] += 1
        self._note_pause(took * 1000)
        if generation == 2 and self._sweep_due():
            self._forced_sweep()

    def _sweep_due(self) -> bool:
        return sweep_due(playing=self.playing, ended_since_sweep=self.ended_since_sweep,
                         seconds_since_sweep=self._clock() - self._swept_at,
                         resident=resident_bytes(),
                         resident_after_sweep=self._resident_after_sweep)

    def _forced_sweep(self) -> None:
        grown_from, started = self._resident_after_sweep or 0, self._clock()
        self._sweep()
        pause = (self._clock() - started) * 1000
        self.stats.forced_sweeps += 1
        self._note_pause(pause)
        log.warning("a full garbage collection ran while calls played (%d), the memory having "
                    "doubled since the last (from %d MB): their audio paused %.0f ms",
                    self.players, grown_from // 2**20, pause)

    def _note_pause(self, ms: float) -> None:
        self.stats.longest_in_play_ms = max(self.stats.longest_in_play_ms, ms)

    def _sweep(self) -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._resident_after_sweep = resident_bytes()
        self._swept_at = self._clock()
        self.ended_since_sweep = 0
        self.stats.sweeps += 1


class NoSchedule:
    """Collection left to CPython: what a ticker holds unless given a schedule."""

    def joined(self) -> None: ...

    def left(self) -> None: ...

    def hold(self, ticker: object) -> None: ...

    def release(self, ticker: object) -> None: ...

    def after_ring(self, time_left: float = FRAME_SECONDS) -> None: ...

    def close(self) -> None: ...
