"""The audit trail: one place every feature writes to, and the admin query.

Entries are append-only (the database refuses UPDATE and DELETE). ``data`` must never
hold a credential; :func:`record` drops any key that names one, as a last guard.

What a stranger can provoke as often as they like (a refused signature, a question
from the wrong address) goes through :meth:`AuditLog.tally` instead: one entry per
kind, source and :data:`TALLY_WINDOW_SECONDS` window, whose ``occurrences`` the repeats raise
in one atomic upsert (the database clock decides the window, on every process alike).
Where the source is an address a stranger chooses, a kind counts at most
``TALLY_SOURCES_PER_WINDOW`` of them apart in a window and the rest in one entry, so
new addresses cannot grow the trail faster either.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from uuid import UUID

from app import db
from app.tables import AuditEntry

#: Repeats of one refusal from one source within this window share one entry.
TALLY_WINDOW_SECONDS = 600
#: Sources counted apart for one kind in one window; more count in one entry.
TALLY_SOURCES_PER_WINDOW = 100

_CREDENTIAL_WORDS = ("password", "secret", "token", "credential", "api_key", "key_value")


# $4 names the kind and source; the window's number completes the key. When the
# caller bounds the sources ($6 not null), a source new to the window once $6 sources
# of the kind have entries in it counts in one shared entry for the rest (keyed $8),
# which holds $7 as its data.
_TALLY = """
WITH slot AS (SELECT floor(extract(epoch FROM now()) / $5::int)::bigint AS n),
keyed AS (
    SELECT n, $4 || ' ' || n AS own,
           $6::int IS NULL
           OR EXISTS (SELECT 1 FROM audit_entry WHERE tally_key = $4 || ' ' || n)
           OR (SELECT count(*) FROM (
                   SELECT 1 FROM audit_entry
                   WHERE kind = $1 AND tally_key IS NOT NULL
                     AND at >= to_timestamp(n * $5::int) LIMIT $6::int) AS counted
              ) < $6::int AS apart
    FROM slot
)
INSERT INTO audit_entry (kind, subject, data, tally_key)
SELECT $1, CASE WHEN apart THEN $2 END, CASE WHEN apart THEN $3::jsonb ELSE $7::jsonb END,
       CASE WHEN apart THEN own ELSE $8 || ' ' || n END
FROM keyed
ON CONFLICT (tally_key) DO UPDATE SET occurrences = audit_entry.occurrences + 1
"""
#: The data of the entry that counts the sources past the bound together.
MANY_SOURCES = {"address": "many addresses"}


def _scrubbed(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if not any(w in k.lower() for w in _CREDENTIAL_WORDS)}


class AuditLog:
    async def record(
        self,
        kind: str,
        *,
        actor: UUID | None = None,
        subject: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        await AuditEntry.insert(
            AuditEntry(kind=kind, actor_id=actor, subject=subject, data=_scrubbed(data or {}))
        )

    async def tally(self, kind: str, source: str, *, subject: str | None = None,
                    data: dict[str, Any] | None = None,
                    many: dict[str, Any] | None = None) -> None:
        """Record ``kind`` from ``source`` once per window, counting the repeats. The
        first occurrence's ``subject`` and ``data`` stand for the window's entry.

        ``many``, for sources a stranger chooses (their address): past
        ``TALLY_SOURCES_PER_WINDOW`` sources of the kind in a window, further sources
        count together in one entry with ``many`` as its data (``MANY_SOURCES``, with
        whatever else it must keep apart, such as a reason), so ever new addresses add
        at most one more entry per kind, ``many`` and window. Without it, every source
        keeps its own entry."""
        crowd = json.dumps(_scrubbed(many)) if many is not None else None
        async with db.connection() as connection:
            await connection.execute(
                _TALLY, kind, subject, json.dumps(_scrubbed(data or {})), f"{kind} {source}",
                TALLY_WINDOW_SECONDS, TALLY_SOURCES_PER_WINDOW if many is not None else None,
                crowd, f"{kind} * {crowd}")

    async def query(
        self, *, kind: str | None = None, since: dt.datetime | None = None,
        until: dt.datetime | None = None, actor: UUID | None = None,
        before: int | None = None, limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Entries newest first. ``until`` is exclusive; ``before`` is an entry id, the
        cursor of the next page (ids only grow, so a page never repeats an entry)."""
        query = AuditEntry.select().order_by(AuditEntry.id, ascending=False).limit(limit)
        if kind is not None:
            query = query.where(AuditEntry.kind == kind)
        if since is not None:
            query = query.where(AuditEntry.at >= since)
        if until is not None:
            query = query.where(AuditEntry.at < until)
        if actor is not None:
            query = query.where(AuditEntry.actor_id == actor)
        if before is not None:
            query = query.where(AuditEntry.id < before)
        return await query
