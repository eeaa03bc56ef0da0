"""The identities behind API keys that this process may answer from memory.

Every ``/v1`` request needs the user its key acts as; a database round trip per
request for that was the largest cost left on the passthrough path. The cache holds
what a lookup returned, by key fingerprint, and is trusted only while
``app.services.auth_changes`` says the database's change notices reach this process
(``live``, renewed by ``vouch`` each time the process hears a notice of its own): from
the moment they might not, nothing is answered from memory and every lookup goes to
the database. Any change to keys or accounts drops everything (such changes are rare;
working out which entries a role change touches is not worth the risk).

A lookup that started before a drop must not put its older answer back afterwards:
``put`` is given the ``generation`` read before the lookup and refuses an entry once
the cache has been dropped since. Unknown keys are never kept, so guessing keys cannot
fill memory. Entries also age out after ``max_age`` seconds, a bound that holds even if
a change notice were somehow missed.
"""

from __future__ import annotations

__all__ = ["IdentityCache"]

import datetime as dt
import math
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from core.records import frozen

T = TypeVar("T")


@frozen
class _Entry(Generic[T]):
    identity: T
    #: when the key expires (None: never); checked on every hit
    expires_at: dt.datetime | None
    #: when the entry stops being trusted, on the monotonic clock
    stale_at: float


class IdentityCache(Generic[T]):
    def __init__(self, *, max_entries: int = 10_000, max_age: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_entries = max_entries
        self.max_age = max_age
        self._clock = clock
        self._entries: dict[str, _Entry[T]] = {}
        #: until when (monotonic clock) change notices are known to reach the process
        self._vouched_until = -math.inf
        #: how many times the cache was dropped; see ``put``
        self.generation = 0

    @property
    def live(self) -> bool:
        """Whether what is kept may be answered from: notices are known to arrive."""
        return self._clock() < self._vouched_until

    def vouch(self, seconds: float) -> None:
        """Notices were just heard to arrive: trust the cache ``seconds`` longer."""
        self._vouched_until = self._clock() + seconds

    def withdraw(self) -> None:
        """Notices may have stopped arriving: drop everything and trust nothing."""
        self._vouched_until = -math.inf
        self.clear()

    def clear(self) -> None:
        self._entries.clear()
        self.generation += 1

    def get(self, fingerprint: str, now: dt.datetime | None = None) -> T | None:
        """The identity kept for ``fingerprint``, or None: ask the database. A key's
        expiry is judged at ``now``, the current time when not given (read only for
        keys that expire: this runs on every ``/v1`` request)."""
        entry = self._entries.get(fingerprint)
        if entry is None:
            return None
        moment = self._clock()
        if moment >= self._vouched_until:  # not ``live``
            return None
        if entry.stale_at <= moment or (entry.expires_at is not None and entry.expires_at
                                        <= (now or dt.datetime.now(dt.UTC))):
            del self._entries[fingerprint]
            return None
        return entry.identity

    def put(self, fingerprint: str, identity: T, expires_at: dt.datetime | None,
            generation: int) -> None:
        """Keep what a lookup begun at ``generation`` found, unless the cache was
        dropped meanwhile or is not live."""
        if not self.live or generation != self.generation:
            return
        if len(self._entries) >= self.max_entries:
            del self._entries[next(iter(self._entries))]  # the oldest kept
        self._entries[fingerprint] = _Entry(identity, expires_at, self._clock() + self.max_age)

    def __len__(self) -> int:
        return len(self._entries)
