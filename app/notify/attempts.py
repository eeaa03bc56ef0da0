"""The record of every attempt to post (spec: telephony.md "Outward notifications" —
"Every attempt passes the same egress gate as other connectors and is recorded").

An attempt is written ``in_flight`` in its own committed statement before the post,
and finished after it; one left ``in_flight`` by a process that died is marked
``interrupted`` when the row is posted again.

These writes go on a connection of their own while the worker's claim holds the
outbox row. A target deleted meanwhile waits for that claim and, through its cascade,
may hold what these writes need: a wait PostgreSQL cannot see as a deadlock, since
one side of it is the worker awaiting this connection. So they wait at most
``_LOCK_TIMEOUT``; giving up fails the worker's batch, its claim rolls back, and the
deletion goes ahead.
"""

from __future__ import annotations

__all__ = ["UNREADABLE", "finish_attempt", "start_attempt"]

from uuid import UUID

from adapters.notify_sender import PostResult, Result
from app import db

_LOCK_TIMEOUT = "5s"

#: The outcome when the stored url cannot be opened: the encryption key changed.
UNREADABLE = PostResult(Result.FAILED, None,
                        "the stored address cannot be read (the encryption key changed)")


async def start_attempt(target_id: UUID, outbox_id: UUID | None) -> tuple[int, int]:
    """Record an attempt about to be made: its id and its number (1 for the first of
    an outbox row, or for a live test). Numbers count the attempts of a process that
    died too, so they count against the retry schedule."""
    async with db.connection() as connection, connection.transaction():
        await connection.execute(f"SET LOCAL lock_timeout = '{_LOCK_TIMEOUT}'")
        if outbox_id is not None:
            await connection.execute(
                "UPDATE notify_attempt SET result = 'interrupted', finished_at = now(), "
                "detail = 'the process posting it stopped' "
                "WHERE outbox_id = $1 AND result = 'in_flight'", outbox_id)
        row = await connection.fetchrow(
            "INSERT INTO notify_attempt (target_id, outbox_id, number) "
            "SELECT $1, $2, coalesce(max(number), 0) + 1 FROM notify_attempt "
            "WHERE $2::uuid IS NOT NULL AND outbox_id = $2 "
            "RETURNING id, number", target_id, outbox_id)
        return row["id"], row["number"]


async def finish_attempt(attempt_id: int, result: PostResult) -> None:
    async with db.connection() as connection, connection.transaction():
        await connection.execute(f"SET LOCAL lock_timeout = '{_LOCK_TIMEOUT}'")
        await connection.execute(
            "UPDATE notify_attempt SET result = $2, status_code = $3, detail = $4, "
            "finished_at = now() WHERE id = $1",
            attempt_id, result.result.value, result.status, result.detail[:500])
