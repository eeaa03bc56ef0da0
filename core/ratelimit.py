"""The per-key request limit: fixed one-minute windows, counted in the database.

A window is the calendar minute (UTC) a request falls in. A key may use ``limit``
requests in a window; the counter lives in one row per key, moved forward by a single
atomic statement, so several server processes share it exactly and a refused request
does not use up the quota. This module holds the arithmetic and the headers; the app
runs the statement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["WINDOW_SECONDS", "window_start", "RateDecision", "decide", "headers"]

WINDOW_SECONDS = 60


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
