"""The audit trail: one place every feature writes to, and the admin query.

Entries are append-only (the database refuses UPDATE and DELETE). ``data`` must never
hold a credential; :func:`record` drops any key that names one, as a last guard.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from uuid import UUID

from app.tables import AuditEntry

_CREDENTIAL_WORDS = ("password", "secret", "token", "credential", "api_key", "key_value")


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

    async def query(
        self, *, kind: str | None = None, since: dt.datetime | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        query = AuditEntry.select().order_by(AuditEntry.id, ascending=False).limit(limit)
        if kind is not None:
            query = query.where(AuditEntry.kind == kind)
        if since is not None:
            query = query.where(AuditEntry.at >= since)
        return await query
