"""Writing notifications into the outbox, in the transaction of the event they tell of.

spec: telephony.md "Outward notifications" — "Deciding to notify and posting are
separate: the call never waits, and a failing destination is retried." ``enqueue``
only inserts rows: one per enabled target of the account whose events filter takes
the event. It commits or rolls back with the event itself, so a booking that fails
leaves no notification behind and one that commits always has its notification.
The worker (``app.notify.worker``) posts them later.
"""

from __future__ import annotations

__all__ = ["enqueue"]

from typing import Any
from uuid import UUID

from core.notifications import MAX_TEXT_LENGTH, TARGET_EVENTS, EventKind

_ENQUEUE = """
    INSERT INTO notify_outbox (target_id, account_id, event, text, subject_id)
    SELECT id, account_id, $2, $3, $4
    FROM notify_target
    WHERE account_id = $1 AND enabled AND $2 = ANY (events)
"""


def _asyncpg(connection: Any) -> Any:
    """The asyncpg connection behind a Piccolo transaction, or the connection itself."""
    return getattr(connection, "connection", connection)


async def enqueue(connection: Any, *, account_id: UUID, event: str, text: str,
                  subject_id: UUID | None = None) -> None:
    """Write one outbox row per enabled target of the account whose events filter takes
    ``event``, inside the caller's transaction (``connection`` is the asyncpg
    connection or Piccolo transaction the event itself is written in). ``text`` is
    already the ≤300-character line (``core.notifications.notification_text``)."""
    kind = EventKind(event)  # an unknown event is a programming error: ValueError
    if kind not in TARGET_EVENTS:
        raise ValueError(f"{event!r} is not an event of the outbox")
    if not text or len(text) > MAX_TEXT_LENGTH:
        raise ValueError(f"a notification line has 1 to {MAX_TEXT_LENGTH} characters")
    await _asyncpg(connection).execute(_ENQUEUE, account_id, kind.value, text, subject_id)
