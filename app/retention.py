"""Retention: what the daily sweep deletes, and nothing else.

``api.chat_retention_days`` > 0 deletes conversations created through ``/v1`` older than
that many days; 0 keeps them (spec: public-api.md "Limits").

Telephone lines (spec: telephony.md "Retention periods"): nothing happens unless some
line has a period. Then, for the calls of each line, judged by when the call started:
``log_days`` deletes the call record itself (with its conversation and recording;
appointments and enquiries drop their reference to it), ``transcript_days`` deletes
the conversation and marks the call tidied away, ``recording_days`` deletes the audio
file; and a recording file whose call row is gone is deleted too. A call still in
progress is never touched. The calls of a released line are swept by the periods the
line had when it was released (kept on each call, ``app.telephony.lines``); a call
keeps its line's periods from its start too. Only counts reach the audit trail
(``telephony.retention.swept``).

Outward notifications: finished outbox rows (delivered, failed, suppressed) and the
record of their attempts go after ``NOTIFICATION_DAYS``: their line names a caller,
and once posted it has no further use here. Pending rows are never removed.

Appointments, enquiries and the screening list are never touched here.

The sweep reaches into every area (the platform's chats, telephony's calls and
recordings, notify's outbox), so it stands above the features, beside the bundle
that builds it, rather than in any one of them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from app import db
from app.services.audit import AuditLog
from app.services.settings import Settings
from app.tables import Chat
from app.telephony.erasure import recorded_call_ids, remove_recording, tidy_away

# Each call's periods: its line's while the line is registered, else those the call
# kept (its line's when the call started, or when the line was released).
_PERIODS = """
(SELECT c.id, coalesce(l.transcript_days, c.transcript_days) AS transcript_days,
        coalesce(l.log_days, c.log_days) AS log_days,
        coalesce(l.recording_days, c.recording_days) AS recording_days
 FROM telephony_call c LEFT JOIN telephony_line l ON l.id = c.number_id)
"""

_ANY_PERIOD = """
SELECT EXISTS (SELECT 1 FROM telephony_line
               WHERE transcript_days > 0 OR log_days > 0 OR recording_days > 0)
    OR EXISTS (SELECT 1 FROM telephony_call c
               WHERE (c.transcript_days > 0 OR c.log_days > 0 OR c.recording_days > 0)
                 AND NOT EXISTS (SELECT 1 FROM telephony_line l WHERE l.id = c.number_id))
"""

# A period of d days removes what started more than d days before the sweep.
_EXPIRED_CALLS = f"""
DELETE FROM telephony_call c USING {_PERIODS} p
WHERE p.id = c.id AND p.log_days > 0 AND c.outcome <> 'in_progress'
  AND c.started_at < $1::timestamptz - make_interval(days => p.log_days)
RETURNING c.id, c.chat_id
"""

_EXPIRED_TRANSCRIPTS = f"""
SELECT c.id FROM telephony_call c JOIN {_PERIODS} p ON p.id = c.id
WHERE p.transcript_days > 0 AND c.outcome <> 'in_progress' AND c.tidied_at IS NULL
  AND c.started_at < $1::timestamptz - make_interval(days => p.transcript_days)
"""

_EXPIRED_RECORDINGS = f"""
SELECT c.id FROM telephony_call c JOIN {_PERIODS} p ON p.id = c.id
WHERE c.id = ANY($2::uuid[]) AND p.recording_days > 0 AND c.outcome <> 'in_progress'
  AND c.started_at < $1::timestamptz - make_interval(days => p.recording_days)
"""

_KNOWN_CALLS = "SELECT id FROM telephony_call WHERE id = ANY($1::uuid[])"

#: How long the record of a finished notification is kept.
NOTIFICATION_DAYS = 30

_FINISHED_NOTIFICATIONS = """
DELETE FROM notify_outbox
WHERE status <> 'pending' AND finished_at < $1::timestamptz - make_interval(days => $2)
RETURNING id
"""

# A live test's attempt has no outbox row to go with.
_OLD_TEST_ATTEMPTS = """
DELETE FROM notify_attempt
WHERE outbox_id IS NULL AND started_at < $1::timestamptz - make_interval(days => $2)
"""


class Retention:
    def __init__(self, settings: Settings, audit: AuditLog,
                 recordings_dir: str | None = None) -> None:
        self.settings = settings
        self.audit = audit
        self.recordings_dir = recordings_dir

    async def sweep_api_chats(self, now: dt.datetime) -> int:
        days = await self.settings.get("api.chat_retention_days")
        if days <= 0:
            return 0
        cutoff = now - dt.timedelta(days=days)
        removed = await Chat.delete().where(
            (Chat.source == "api") & (Chat.created_at < cutoff)).returning(Chat.id)
        return len(removed)

    async def sweep_notifications(self, now: dt.datetime) -> int:
        """Finished notifications older than ``NOTIFICATION_DAYS``; how many went."""
        async with db.connection() as connection:
            removed = await connection.fetch(_FINISHED_NOTIFICATIONS, now, NOTIFICATION_DAYS)
            await connection.execute(_OLD_TEST_ATTEMPTS, now, NOTIFICATION_DAYS)
        return len(removed)

    async def _remove_recordings(self, call_ids: list[Any]) -> int:
        if self.recordings_dir is None:
            return 0
        return sum([await remove_recording(self.recordings_dir, call_id)
                    for call_id in call_ids])

    async def sweep_telephony(self, now: dt.datetime) -> dict[str, int] | None:
        """The telephone lines' periods applied; None when no line has one."""
        async with db.connection() as connection:
            if not await connection.fetchval(_ANY_PERIOD):
                return None
            async with connection.transaction():
                gone = await connection.fetch(_EXPIRED_CALLS, now)
                chats = [row["chat_id"] for row in gone if row["chat_id"] is not None]
                await connection.execute("DELETE FROM chat WHERE id = ANY($1::uuid[])", chats)
            transcripts = [row["id"] for row in await connection.fetch(_EXPIRED_TRANSCRIPTS, now)]
        counts = {"calls": len(gone), "conversations": len(chats)}
        counts["conversations"] += await tidy_away(transcripts)
        counts["recordings"] = await self._remove_recordings([row["id"] for row in gone])
        files = await recorded_call_ids(self.recordings_dir) if self.recordings_dir else []
        async with db.connection() as connection:
            expired = [row["id"] for row in await connection.fetch(
                _EXPIRED_RECORDINGS, now, files)]
            known = {row["id"] for row in await connection.fetch(_KNOWN_CALLS, files)}
        counts["recordings"] += await self._remove_recordings(expired)
        counts["orphan_recordings"] = await self._remove_recordings(
            [call_id for call_id in files if call_id not in known])
        return counts

    async def sweep(self, now: dt.datetime) -> dict[str, Any]:
        """One daily sweep; returns and audits the counts."""
        counts: dict[str, Any] = {"api_chats": await self.sweep_api_chats(now),
                                  "notifications": await self.sweep_notifications(now)}
        if counts["api_chats"] or counts["notifications"]:
            await self.audit.record("retention.swept", data=dict(counts))
        telephony = await self.sweep_telephony(now)
        if telephony is not None:
            await self.audit.record("telephony.retention.swept", data=telephony)
            counts["telephony"] = telephony
        return counts
