"""The per-key request limit: fixed one-minute windows, counted in the database.

A window is the calendar minute (UTC) a request falls in. A key may use ``limit``
requests in a window; the counter lives in one row per key, moved forward by a single
atomic statement, so several server processes share it and a refused request does
not use up the quota. This module holds the arithmetic and the headers; the app runs
the statement.

Leases: a busy key's row would serialise every request of every process on its lock.
So a process claims ``lease_size(limit)`` permits at once and spends them from memory
(``Lease``). Below 200 requests a minute the lease is one permit — every request
counted in the row, exactly. Above, it is 1 % of the limit (at most 50): the limit is
still never exceeded, and permits another process holds unspent can refuse a request
at most that much early.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["WINDOW_SECONDS", "Lease", "RateDecision", "decide", "headers", "lease_size",
           "window_start"]

WINDOW_SECONDS = 60
_MAX_LEASE = 50


def window_start(now: float) -> float:
    """The start (epoch seconds) of the window ``now`` falls in."""
    return math.floor(now / WINDOW_SECONDS) * WINDOW_SECONDS


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    limit: int
    #: requests used in the current window, this one included when allowed
    used: int
    #: seconds until the window ends
    resets_in: float

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.resets_in))


def lease_size(limit: int) -> int:
    """Permits one process claims at a time for a key with this limit."""
    return max(1, min(_MAX_LEASE, limit // 100))


@dataclass(slots=True)
class Lease:
    """Permits this process claimed from one key's counter in one window."""

    window: float
    #: the shared counter right after this process's last claim
    counted: int
    #: claimed and not yet spent
    permits: int

    def spend(self, window: float) -> int | None:
        """Spend one permit of ``window``: the requests used so far as this process
        sees them (its unspent permits not counted), or None when it holds none."""
        if self.window != window or self.permits <= 0:
            return None
        self.permits -= 1
        return self.counted - self.permits


def decide(used_after: int | None, limit: int, now: float) -> RateDecision:
    """``used_after`` is the counter the statement returned, or None when it refused."""
    resets_in = window_start(now) + WINDOW_SECONDS - now
    if used_after is None:
        return RateDecision(False, limit, limit, resets_in)
    return RateDecision(True, limit, used_after, resets_in)


def headers(decision: RateDecision) -> dict[str, str]:
    """OpenAI-style ``x-ratelimit-*`` headers, plus ``Retry-After`` when refused."""
    out = {
        "x-ratelimit-limit-requests": str(decision.limit),
        "x-ratelimit-remaining-requests": str(decision.remaining),
        "x-ratelimit-reset-requests": f"{decision.retry_after}s",
    }
    if not decision.allowed:
        out["Retry-After"] = str(decision.retry_after)
    return out
