"""The audit trail: one place every feature writes to, and the admin query.

Entries are append-only (the database refuses UPDATE and DELETE). ``data`` must never
hold a credential; :func:`record` drops any key that names one, as a last guard.

What a stranger can provoke as often as they like (a refused signature, a question
from the wrong address) goes through :meth:`AuditLog.tally` instead: one entry per
kind, source and :data:`TALLY_WINDOW_SECONDS` window, whose ``occurrences`` the repeats raise
in one atomic upsert (the database clock decides the window, on every process alike).
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

_CREDENTIAL_WORDS = ("password", "secret", "token", "credential", "api_key", "key_value")


# $4 names the kind and source; the window's number completes the key.
_TALLY = """
INSERT INTO audit_entry (kind, subject, data, tally_key)
VALUES ($1, $2, $3::jsonb, $4 || ' ' || floor(extract(epoch FROM now()) / $5)::bigint)
ON CONFLICT (tally_key) DO UPDATE SET occurrences = audit_entry.occurrences + 1
"""


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
                    data: dict[str, Any] | None = None) -> None:
        """Record ``kind`` from ``source`` once per window, counting the repeats. The
        first occurrence's ``subject`` and ``data`` stand for the window's entry."""
        async with db.connection() as connection:
            await connection.execute(_TALLY, kind, subject, json.dumps(_scrubbed(data or {})),
                                     f"{kind} {source}", TALLY_WINDOW_SECONDS)

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
