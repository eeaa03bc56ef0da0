"""A small burst, then a steady pace: a token bucket per caller.

For actions a person does by hand a few times in a row and that cost something each
time (the live test of a notification target posts to the outside world). A caller
has ``burst`` tokens; each action spends one; tokens come back one every
``refill_seconds``, up to ``burst``. Pure: the caller passes the clock's reading.
"""

from __future__ import annotations

__all__ = ["BurstPolicy", "Bursts"]

import math
from collections.abc import Hashable
from dataclasses import dataclass, field

from .records import frozen


@frozen
class BurstPolicy:
    burst: int  #: actions allowed at once
    refill_seconds: float  #: seconds for one more action to be allowed


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


@dataclass(slots=True)
class Bursts:
    """The buckets of every caller under one policy."""

    policy: BurstPolicy
    _buckets: dict[Hashable, _Bucket] = field(default_factory=dict)

    def _refilled(self, caller: Hashable, now: float) -> _Bucket:
        bucket = self._buckets.get(caller)
        if bucket is None:
            bucket = self._buckets[caller] = _Bucket(float(self.policy.burst), now)
        earned = max(0.0, now - bucket.at) / self.policy.refill_seconds
        bucket.tokens, bucket.at = min(float(self.policy.burst), bucket.tokens + earned), now
        return bucket

    def take(self, caller: Hashable, now: float) -> int:
        """Spend one of ``caller``'s tokens: 0 when it was there (go ahead), else the
        whole seconds to wait before one is (nothing spent)."""
        self._forget_full(now)
        bucket = self._refilled(caller, now)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0
        return max(1, math.ceil((1 - bucket.tokens) * self.policy.refill_seconds))

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that have filled up again: they say nothing a new one
        would not, and the map must not grow with every caller ever seen."""
        full_after = self.policy.burst * self.policy.refill_seconds
        for caller in [caller for caller, bucket in self._buckets.items()
                       if now - bucket.at >= full_after]:
            del self._buckets[caller]
