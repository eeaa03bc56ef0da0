"""Garbage collection kept out of the way of calls' audio frames.

CPython's cyclic collector runs when allocations pass its thresholds, wherever the
process happens to be: in the middle of the ticker sending 500 calls' frames, say. A
young collection costs up to a few milliseconds there; a full one walks every object
the live calls hold (50–70 ms at 500 calls), and no frame goes out meanwhile, so every
call misses three slots. A process serving calls therefore runs its collections
itself, on the ticker's beat (``CollectionSchedule``):

* While any ticker is playing, automatic collection is off. After each ring, once
  every frame of the slot has gone out, the schedule runs the collection the
  allocations since call for, by the collector's own thresholds (``due_generation``):
  the pause lands in the rest of the slot instead of between two calls' frames.
* The old generation is kept empty, so no collection there walks the live calls:
  whatever survives a middle-generation collection is moved by ``gc.freeze`` to the
  permanent generation, which no collection walks. Every collection while playing
  then costs about what a young one does, however many calls are live.
* What is frozen is never collected, and a call that ends leaves cycles (the
  cancellations that end its tasks hold their frames): its frozen objects become
  garbage that only a sweep frees — ``gc.unfreeze``, a full collection of everything,
  then ``gc.freeze`` again. A sweep runs when no ticker is playing (no caller hears the
  pause) and something may have become garbage since the last one; while playing, only
  once more calls have ended since the last sweep than are being played now (and at
  least ``FORCED_SWEEP_CALLS``), or the frozen objects have grown ``FROZEN_GROWTH``
  times over (``sweep_due``). Garbage then stays about the size of the live calls, and
  such a sweep pauses every call's audio once; it is logged.

Off by default: ``svc serve`` (and the call-load benchmark's server) installs it. A
test process that made and froze everything would keep what it froze.
"""

from __future__ import annotations

import gc
import logging
import time

__all__ = ["FORCED_SWEEP_CALLS", "FROZEN_COUNT_EVERY", "FROZEN_GROWTH", "CollectionSchedule", "CollectionStats",
           "collection_schedule", "due_generation", "install_collection_schedule",
           "sweep_due", "uninstall_collection_schedule"]

log = logging.getLogger("svc.voice.collection")

#: A sweep while calls play waits for at least this many ended calls...
FORCED_SWEEP_CALLS = 50
#: ...or for the frozen objects to grow this many times over since the last sweep.
FROZEN_GROWTH = 4
#: Counting the frozen objects walks them all: done at every this many freezes.
FROZEN_COUNT_EVERY = 16


def due_generation(counts: tuple[int, int, int],
                   thresholds: tuple[int, int, int]) -> int | None:
    """The generation CPython would collect now (``gc.get_count``, ``gc.get_threshold``),
    or None. Its own rule: the oldest generation whose count passed its threshold."""
    due = None
    for generation in range(3):
        if thresholds[generation] <= 0 or counts[generation] < thresholds[generation]:
            break
        due = generation
    return due


def sweep_due(*, playing: bool, ended_since_sweep: int, players: int,
              frozen: int | None, frozen_after_sweep: int) -> bool:
    """Whether to unfreeze and collect everything now (see the module's docstring).
    ``frozen``: the frozen objects now, when counted; ``frozen_after_sweep``: just
    after the last sweep."""
    if frozen is not None and frozen > FROZEN_GROWTH * max(frozen_after_sweep, 1):
        return True
    if not playing:
        return ended_since_sweep > 0
    return ended_since_sweep >= max(players, FORCED_SWEEP_CALLS)


class CollectionStats:
    """What the schedule did, for an operator or a benchmark to read."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]  # by generation, on the ticker's beat
        self.sweeps = 0
        self.forced_sweeps = 0  # sweeps while calls were playing
        self.longest_in_play_ms = 0.0  # the longest pause a playing call met


class CollectionSchedule:
    """Runs the process's collections on the tickers' beat (module docstring)."""

    def __init__(self, clock=time.perf_counter) -> None:
        self._clock = clock
        self._playing: set[object] = set()  # tickers with frames to ring
        self._was_enabled = False  # automatic collection, before the first ticker played
        self._freezes = 0
        self._frozen_after_sweep = gc.get_freeze_count()
        self.players = 0  # calls joined to a ticker now
        self.ended_since_sweep = 0
        self.stats = CollectionStats()

    @property
    def playing(self) -> bool:
        return bool(self._playing)

    # -- what tickers tell

    def joined(self) -> None:
        self.players += 1

    def left(self) -> None:
        self.players -= 1
        self.ended_since_sweep += 1

    def hold(self, ticker: object) -> None:
        """``ticker`` plays: automatic collection stays off until no ticker does."""
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
        if self._sweep_due(count_frozen=True):
            self._sweep()
        if self._was_enabled:
            gc.enable()

    def after_ring(self) -> None:
        """Every frame of the slot is out: collect what is due, in the slot's rest."""
        if not self._playing:
            return
        generation = due_generation(gc.get_count(), gc.get_threshold())
        if generation is None:
            return
        generation = min(generation, 1)  # the old generation is kept empty
        started = self._clock()
        gc.collect(generation)
        if generation == 1:
            gc.freeze()
            self._freezes += 1
        self.stats.collections[generation] += 1
        self._note_pause((self._clock() - started) * 1000)
        if generation == 1 and self._sweep_due(
                count_frozen=self._freezes % FROZEN_COUNT_EVERY == 0):
            self._forced_sweep()

    def _sweep_due(self, *, count_frozen: bool) -> bool:
        return sweep_due(playing=self.playing, ended_since_sweep=self.ended_since_sweep,
                         players=self.players,
                         frozen=gc.get_freeze_count() if count_frozen else None,
                         frozen_after_sweep=self._frozen_after_sweep)

    def _forced_sweep(self) -> None:
        ended, started = self.ended_since_sweep, self._clock()
        self._sweep()
        pause = (self._clock() - started) * 1000
        self.stats.forced_sweeps += 1
        self._note_pause(pause)
        log.warning("a full garbage collection ran with calls playing (%d playing, "
                    "%d ended since the last): their audio paused %.0f ms",
                    self.players, ended, pause)

    def _note_pause(self, ms: float) -> None:
        self.stats.longest_in_play_ms = max(self.stats.longest_in_play_ms, ms)

    def _sweep(self) -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._frozen_after_sweep = gc.get_freeze_count()
        self.ended_since_sweep = 0
        self.stats.sweeps += 1


class _NoSchedule:
    """The default: collection left to CPython."""

    def joined(self) -> None: ...

    def left(self) -> None: ...

    def hold(self, ticker: object) -> None: ...

    def release(self, ticker: object) -> None: ...

    def after_ring(self) -> None: ...


_installed: CollectionSchedule | _NoSchedule = _NoSchedule()


def install_collection_schedule() -> CollectionSchedule:
    """Have tickers made from now on run the process's collections (serving only)."""
    global _installed
    if not isinstance(_installed, CollectionSchedule):
        _installed = CollectionSchedule()
    return _installed


def uninstall_collection_schedule() -> None:
    """Leave collection to CPython again for tickers made from now on."""
    global _installed
    _installed = _NoSchedule()


def collection_schedule() -> CollectionSchedule | _NoSchedule:
    """What new tickers report to."""
    return _installed
