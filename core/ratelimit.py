"""The per-key request limit: GCRA (the generic cell rate algorithm), without window edges.

A key limited to ``limit`` requests a minute earns one request every ``interval``
(a minute divided by the limit, in whole microseconds, rounded up) and may save up at
most ``limit`` of them: a fresh key can send its whole minute at once, and then one
more each ``interval``. The only state is one instant per key, the *theoretical
arrival time* (TAT): when the key's saved-up requests will have been earned back.
A request at ``now`` passes when ``max(TAT, now) + interval`` is no further than
``limit * interval`` ahead of ``now``, and moves the TAT there. Unlike a count per
clock minute, nothing resets at a boundary: a key that spent its minute at 10:00:59
gets one request back each ``interval`` after, not a whole new minute at 10:01:00.

Times are integers (microseconds since the epoch), so the arithmetic is exact: no
drift however many requests, and the statement the app runs in PostgreSQL computes
the same numbers (``claim``). A refused request changes nothing.

Leases: a busy key's row would serialise every request of every process on its lock.
So a process claims ``lease_size(limit)`` permits at once and spends them from memory
(``Lease``) within ``LEASE_MICROS``. Below 200 requests a minute the lease is one
permit — every request judged in the row, exactly. Above, it is 1 % of the limit (at
most 50). A lease of four permits or more is followed by the next one claimed ahead,
once half of it is spent (``claim_ahead``): the requests of a busy key then find
permits in memory instead of queueing behind the claim's round trip to the database
(on two busy cores, tens of milliseconds at a time). Permits another process holds
unspent, a lease and a half at most, can refuse a request that much early; a
permit spent up to a second after its claim was counted a second early.
"""

from __future__ import annotations

__all__ = ["LEASE_MICROS", "PERIOD_MICROS", "Claim", "Lease", "RateDecision", "admitted",
           "claim", "claim_ahead", "duration_text", "headers", "interval", "lease_size",
           "refused"]

import math
from dataclasses import dataclass
from typing import NamedTuple

from .records import frozen

PERIOD_MICROS = 60_000_000  #: the limit is per minute
LEASE_MICROS = 1_000_000  #: how long claimed permits may be spent
_MAX_LEASE = 50


def interval(limit: int) -> int:
    """Microseconds between two requests at the sustained rate (rounded up, so the
    rate never exceeds ``limit`` a minute)."""
    return -(-PERIOD_MICROS // limit)


def allowance(tat: int, now: int, limit: int) -> int:
    """How many requests would pass at ``now`` (0 to ``limit``)."""
    step = interval(limit)
    return max(0, (now + limit * step - max(tat, now)) // step)


@frozen
class Claim:
    granted: int  #: permits granted, 0 when refused
    tat: int  #: the TAT after the claim (unchanged when refused)


def claim(tat: int | None, now: int, limit: int, wanted: int = 1) -> Claim:
    """Take up to ``wanted`` permits at ``now`` from a key whose TAT is ``tat``
    (None: never used). The app's SQL statement is this function."""
    tat = now if tat is None else tat
    granted = min(wanted, allowance(tat, now, limit))
    if granted < 1:
        return Claim(0, tat)
    return Claim(granted, max(tat, now) + granted * interval(limit))


class RateDecision(NamedTuple):
    """One request judged. A named tuple, not a frozen dataclass: one is made per
    request, and a frozen dataclass sets each field through ``object.__setattr__``."""

    allowed: bool
    limit: int
    remaining: int  #: requests that would still pass now, this one counted
    reset_micros: int  #: until the whole minute's quota is back
    retry_micros: int = 0  #: refused: until the next request would pass

    @property
    def retry_after(self) -> int:
        """``Retry-After`` in whole seconds, rounded up: never too early."""
        return max(1, math.ceil(self.retry_micros / 1_000_000))


def admitted(tat: int, now: int, limit: int) -> RateDecision:
    """The decision for a request that passed, leaving the key at ``tat``."""
    return RateDecision(True, limit, allowance(tat, now, limit), max(0, tat - now))


def refused(tat: int, now: int, limit: int) -> RateDecision:
    """The decision for a request refused at ``now`` with the key at ``tat``."""
    step = interval(limit)
    wait = max(tat, now) + step - limit * step - now
    return RateDecision(False, limit, 0, max(0, tat - now), max(1, wait))


def lease_size(limit: int) -> int:
    """Permits one process claims at a time for a key with this limit."""
    return max(1, min(_MAX_LEASE, limit // 100))


@dataclass(slots=True)
class Lease:
    """Permits this process claimed from one key's TAT and has not spent yet."""

    #: the key's TAT right after this process's claim
    tat: int
    permits: int
    #: the claim's instant plus ``LEASE_MICROS``: unspent permits lapse then
    expires: int
    step: int

    def usable(self, now: int) -> bool:
        """Whether a permit is left to spend at ``now``."""
        return self.permits > 0 and now <= self.expires

    def spend(self, now: int) -> int | None:
        """Spend one permit: the key's TAT as this request sees it (its unspent
        permits not counted), or None when none is left or the lease lapsed."""
        if not self.usable(now):
            return None
        self.permits -= 1
        return self.tat - self.permits * self.step


def claim_ahead(lease: Lease, size: int) -> bool:
    """Whether to claim the next ``size`` permits now, before ``lease`` runs out: half
    of a lease of four permits or more is spent (smaller leases belong to keys too
    slow to queue on their claims)."""
    return size >= 4 and lease.permits <= size // 2


def duration_text(micros: int) -> str:
    """A duration the way OpenAI's ``x-ratelimit-reset-*`` headers write it: ``0s``,
    ``120ms``, ``8.64s``, ``6m0s``, ``1h2m3.5s`` (milliseconds, rounded up)."""
    millis = -(-max(0, micros) // 1000)
    if millis < 1000:
        return f"{millis}ms" if millis else "0s"
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds = f"{rest / 1000:.3f}".rstrip("0").rstrip(".")
    return (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "") \
        + f"{seconds}s"


def headers(decision: RateDecision) -> dict[str, str]:
    """OpenAI's ``x-ratelimit-*`` request headers; ``Retry-After`` (seconds) and
    ``retry-after-ms`` (the SDKs read it first) when refused."""
    out = {
        "x-ratelimit-limit-requests": str(decision.limit),
        "x-ratelimit-remaining-requests": str(decision.remaining),
        "x-ratelimit-reset-requests": duration_text(decision.reset_micros),
    }
    if not decision.allowed:
        out["Retry-After"] = str(decision.retry_after)
        out["retry-after-ms"] = str(-(-decision.retry_micros // 1000))
    return out
