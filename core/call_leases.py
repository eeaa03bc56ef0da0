"""Which calls in progress no process runs any more, given the leases and the time.

Every server process holds a lease (a row renewed every ``RENEW_SECONDS``, lapsing
``LEASE_SECONDS`` after the last renewal) and names itself as the owner of each call
whose audio it runs. A process killed outright, or cut off from its database, stops
renewing; its calls would otherwise stay ``in_progress`` for ever and keep counting
against ``telephony.max_concurrent_calls``. So a call with audio is orphaned when:

* its owner holds no lease that is still live at ``now`` (the row is gone or lapsed),
  or it names no owner at all (recorded before calls had owners); or
* it is the judging process's own call, yet that process no longer runs it (its end
  could not be written, the database being away) and has not for ``ADOPTION_GRACE``
  since its audio started — the grace covers the moment between the ticket being
  redeemed and the call being registered as running.

Calls whose audio never started are not judged here: their ticket lapses and they
end ``no_media`` at the next admission (``app.telephony.limits``). All times come from
the database's clock, so the hosts' clocks do not matter.
"""

from __future__ import annotations

__all__ = ["ADOPTION_GRACE", "LEASE_SECONDS", "RENEW_SECONDS", "RunningCall", "orphaned"]

import datetime as dt
from collections.abc import Iterable, Mapping, Set
from uuid import UUID

from .records import frozen

#: A lease lapses this long after its last renewal.
LEASE_SECONDS = 15.0
#: How often a process renews its lease and looks for orphaned calls.
RENEW_SECONDS = 5.0
#: How long a process's own call may go unregistered after its audio started.
ADOPTION_GRACE = dt.timedelta(seconds=LEASE_SECONDS)


@frozen
class RunningCall:
    """A call recorded in progress whose audio started."""

    call_id: UUID
    owner: UUID | None
    media_started_at: dt.datetime


def orphaned(calls: Iterable[RunningCall], leases: Mapping[UUID, dt.datetime],
             now: dt.datetime, *, me: UUID | None = None,
             running_here: Set[UUID] = frozenset()) -> list[RunningCall]:
    """The calls to end ``dropped``. ``leases``: each owner's ``expires_at``; ``me`` and
    ``running_here``: the judging process and the calls it runs now."""
    found = []
    for call in calls:
        expires = leases.get(call.owner) if call.owner is not None else None
        if expires is None or expires <= now:
            found.append(call)
        elif (call.owner == me and call.call_id not in running_here
              and call.media_started_at + ADOPTION_GRACE <= now):
            found.append(call)
    return found
