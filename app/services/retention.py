"""Retention: what the daily sweep deletes, and nothing else.

``api.chat_retention_days`` > 0 deletes conversations created through ``/v1`` older than
that many days; 0 keeps them (spec: public-api.md "Limits"). Only counts reach the
audit trail. Appointments, enquiries and the screening list are never touched here.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from app.services.audit import AuditLog
from app.services.settings import Settings
from app.tables import Chat


class Retention:
    def __init__(self, settings: Settings, audit: AuditLog) -> None:
        self.settings = settings
        self.audit = audit

    async def sweep_api_chats(self, now: dt.datetime) -> int:
        days = await self.settings.get("api.chat_retention_days")
        if days <= 0:
            return 0
        cutoff = now - dt.timedelta(days=days)
        removed = await Chat.delete().where(
            (Chat.source == "api") & (Chat.created_at < cutoff)).returning(Chat.id)
        return len(removed)

    async def sweep(self, now: dt.datetime) -> dict[str, Any]:
        """One daily sweep; returns and audits the counts."""
        counts = {"api_chats": await self.sweep_api_chats(now)}
        if any(counts.values()):
            await self.audit.record("retention.swept", data=counts)
        return counts
