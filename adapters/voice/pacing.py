"""The 20 ms beat every call's playback keeps: one shared ticker per event loop.

A process plays hundreds of calls at once, each a frame every 20 ms. Each call's
player sleeping towards its own next slot costs a timer per frame per call and lets
every call drift on its own as the loop gets busy. Instead, all the players of an
event loop wait for the same ticks of one grid (``FRAME_SECONDS`` apart): a single
timer wakes every waiting player at once, each sends its next frame, and the
interval between two frames of a call is the interval between two ticks.

``FrameTicker.next_tick`` waits for the next tick and returns its time on the loop's
clock. A player that comes back after its tick has passed (the process was busy)
waits for the following one: a slot goes without a frame, but frames never burst to
catch up. ``loop_clock`` is the running loop's own clock, read without asking which
event loop runs each time (``anyio.current_time`` does, through ``sniffio``).
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections.abc import Callable

import anyio
import sniffio

from adapters.voice.transport import FRAME_SECONDS

__all__ = ["FrameTicker", "frame_ticker", "loop_clock"]


def loop_clock() -> Callable[[], float]:
    """The running event loop's monotonic clock (the one ``anyio.current_time`` reads)."""
    if sniffio.current_async_library() == "asyncio":
        return asyncio.get_running_loop().time
    return anyio.current_time


class FrameTicker:
    """Ticks every ``FRAME_SECONDS`` on the running loop's clock, while anyone waits."""

    def __init__(self) -> None:
        self.clock = loop_clock()
        self._loop = (asyncio.get_running_loop()
                      if sniffio.current_async_library() == "asyncio" else None)
        # One future per waiting player: a player whose call ends is cancelled alone.
        self._waiters: list[asyncio.Future[float]] = []
        self._rung_at = -math.inf  # the last tick rung

    def _next_tick_at(self) -> float:
        return (math.floor(self.clock() / FRAME_SECONDS) + 1) * FRAME_SECONDS

    async def next_tick(self) -> float:
        """Wait for the next tick of the grid; its time."""
        at = self._next_tick_at()
        if at < self._rung_at + FRAME_SECONDS / 2:
            # The loop's timers may ring a little before their time: a tick is never
            # given twice, so a player never sends two frames in one slot.
            at = self._rung_at + FRAME_SECONDS
        if self._loop is None:
            # Not on asyncio: the same grid, slept towards by each caller.
            await anyio.sleep(at - self.clock())
            return at
        if not self._waiters:
            self._loop.call_at(at, self._ring, at)
        waiter = self._loop.create_future()
        self._waiters.append(waiter)
        return await waiter

    def _ring(self, at: float) -> None:
        self._rung_at = at
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(at)


_TICKERS: weakref.WeakKeyDictionary[object, FrameTicker] = weakref.WeakKeyDictionary()


def frame_ticker() -> FrameTicker:
    """The ticker of the running event loop (made at its first use)."""
    if sniffio.current_async_library() != "asyncio":
        return FrameTicker()
    loop = asyncio.get_running_loop()
    ticker = _TICKERS.get(loop)
    if ticker is None:
        ticker = _TICKERS[loop] = FrameTicker()
    return ticker
