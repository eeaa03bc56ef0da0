"""One timer for a connection's run of deadlines.

A connection sets a deadline for each wait (a request's headers, its body, the next
request on a kept-alive connection; an upstream's answer, each silence in its body)
and lifts it when the wait ends: several for every request. A timer made and
cancelled for each is, on uvloop, about 3 µs of CPU apiece. Each deadline usually
falls after the one before, so ``Deadline`` leaves its one timer to run while it
fires no later than the deadline now set: when it fires early (the deadline it was
made for has moved on, or been lifted), it waits again for what is due then, or does
nothing. A busy connection makes about one timer per deadline's length, not several
per request.
"""

from __future__ import annotations

__all__ = ["Deadline"]

import asyncio
from collections.abc import Callable

_CLOCK_STEP = 0.001


class Deadline:
    """Calls ``expired`` once a deadline set with ``set`` passes before ``lift``."""

    __slots__ = ("_loop", "_expired", "_timer", "_due")

    def __init__(self, loop: asyncio.AbstractEventLoop, expired: Callable[[], None]) -> None:
        self._loop = loop
        self._expired = expired
        self._timer: asyncio.TimerHandle | None = None
        self._due: float | None = None  # when the wait now timed runs out

    @property
    def is_set(self) -> bool:
        return self._due is not None

    def set(self, seconds: float) -> None:
        """Time the wait that begins now: ``seconds`` from now, in place of any
        deadline set before."""
        due = self._loop.time() + seconds
        self._due = due
        timer = self._timer
        if timer is not None:
            if timer.when() <= due:
                return  # fires first, and then waits again for this deadline
            timer.cancel()
        self._timer = self._loop.call_at(due, self._fired)

    def lift(self) -> None:
        """The wait ended in time: the timer, when it fires, finds nothing due."""
        self._due = None

    def stop(self) -> None:
        """Lift the deadline and let the timer go (the connection is done with)."""
        self._due = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fired(self) -> None:
        self._timer = None
        due = self._due
        if due is None:
            return
        # Within a millisecond counts as due: uvloop's clock and timers count whole
        # milliseconds, and waiting again for less would only spin until the next.
        if due - self._loop.time() >= _CLOCK_STEP:
            self._timer = self._loop.call_at(due, self._fired)
            return
        self._due = None
        self._expired()
