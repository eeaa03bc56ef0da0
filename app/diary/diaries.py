"""An account's diary: its settings, opening hours and closures (``/api/diary``).

spec: telephony.md "Diary (per account)" — timezone (IANA, must resolve),
slot_minutes, lead_minutes, horizon_days, enabled, and hours "replaced wholesale on
each write"; closures are local dates with an optional note. Every rule is
``core.diary.parse_diary``'s; a refused write changes nothing.

An account that never wrote its diary reads the defaults below with
``configured: false``; it offers no times (``enabled`` false, no hours) until written.
A write may leave fields out: they keep their current (or default) values, except
``hours``, which is replaced whole whenever it is sent.
"""

from __future__ import annotations

__all__ = ["DEFAULT_DIARY", "Diaries", "StoredDiary", "diary_zone", "load_diary"]

import datetime as dt
import json
from typing import TYPE_CHECKING, Any
from uuid import UUID
from zoneinfo import ZoneInfo

import asyncpg

from app import db
from app.errors import Conflict, NotFound, Unprocessable
from app.services.audit import AuditLog
from core.diary import Diary, DiaryError, OpeningPeriod, parse_diary

if TYPE_CHECKING:  # the clock reads a diary's zone from here
    from app.diary.clock import Clock

DEFAULT_DIARY = Diary(timezone="UTC", slot_minutes=30, lead_minutes=60, horizon_days=60,
                      enabled=False, hours=())
MAX_NOTE = 500

_SELECT = """
SELECT timezone, slot_minutes, lead_minutes, horizon_days, enabled, hours, updated_at
FROM diary WHERE account_id = $1
"""
_UPSERT = """
INSERT INTO diary (account_id, timezone, slot_minutes, lead_minutes, horizon_days, enabled,
                   hours, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, now())
ON CONFLICT (account_id) DO UPDATE SET timezone = $2, slot_minutes = $3, lead_minutes = $4,
    horizon_days = $5, enabled = $6, hours = $7::jsonb, updated_at = now()
"""
_CLOSURES = """
SELECT id, closed_on, note FROM diary_closure WHERE account_id = $1 ORDER BY closed_on
"""


class StoredDiary:
    """A diary as read inside a transaction: the rules' ``Diary`` and its closures."""

    def __init__(self, diary: Diary, closures: dict[dt.date, dict[str, Any]],
                 updated_at: dt.datetime | None) -> None:
        self.diary = diary
        self.closures = closures
        self.updated_at = updated_at

    @property
    def closed_dates(self) -> frozenset[dt.date]:
        return frozenset(self.closures)


def _hours_json(diary: Diary) -> str:
    return json.dumps([{"weekday": p.weekday, "opens_minute": p.opens_minute,
                        "closes_minute": p.closes_minute} for p in diary.hours])


def _diary_from_row(row: asyncpg.Record) -> Diary:
    hours = row["hours"]
    periods = json.loads(hours) if isinstance(hours, str) else hours
    return Diary(row["timezone"], row["slot_minutes"], row["lead_minutes"],
                 row["horizon_days"], row["enabled"],
                 tuple(OpeningPeriod(**period) for period in periods))


async def load_diary(connection: asyncpg.Connection, account_id: UUID) -> StoredDiary:
    """The account's diary and closures (the defaults when it never wrote one)."""
    row = await connection.fetchrow(_SELECT, account_id)
    closures = {c["closed_on"]: dict(c) for c in await connection.fetch(_CLOSURES, account_id)}
    if row is None:
        return StoredDiary(DEFAULT_DIARY, closures, None)
    return StoredDiary(_diary_from_row(row), closures, row["updated_at"])


async def diary_zone(account_id: UUID) -> ZoneInfo:
    """The time zone of the account's diary."""
    async with db.connection() as connection:
        return (await load_diary(connection, account_id)).diary.zone


def closure_view(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": str(row["id"]), "closed_on": row["closed_on"].isoformat(), "note": row["note"]}


def diary_view(account_id: UUID, stored: StoredDiary) -> dict[str, Any]:
    diary = stored.diary
    return {
        "account_id": str(account_id),
        "configured": stored.updated_at is not None,
        "timezone": diary.timezone,
        "slot_minutes": diary.slot_minutes,
        "lead_minutes": diary.lead_minutes,
        "horizon_days": diary.horizon_days,
        "enabled": diary.enabled,
        "hours": json.loads(_hours_json(diary)),
        "closures": [closure_view(c) for c in stored.closures.values()],
        "updated_at": stored.updated_at.isoformat() if stored.updated_at else None,
    }


def parse_closed_on(value: Any) -> dt.date:
    """A closure's date, ``YYYY-MM-DD`` and nothing else."""
    try:
        if isinstance(value, str) and len(value) == 10:
            return dt.date.fromisoformat(value)
    except ValueError:
        pass
    raise Unprocessable("closed_on must be a date written YYYY-MM-DD.", field="closed_on")


class Diaries:
    """The owner's use cases for the diary's settings and closures."""

    def __init__(self, audit: AuditLog, clock: Clock) -> None:
        self.audit = audit
        self.clock = clock

    async def get(self, account_id: UUID) -> dict[str, Any]:
        async with db.connection() as connection:
            return diary_view(account_id, await load_diary(connection, account_id))

    async def put(self, account_id: UUID, body: Any, *, actor: UUID) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise Unprocessable("Send the diary as a JSON object.")
        async with db.connection() as connection, connection.transaction():
            current = await load_diary(connection, account_id)
            try:
                diary = parse_diary(body, current.diary)
            except DiaryError as error:
                raise Unprocessable(f"{error.field}: {error.message}.", field=error.field) from None
            await connection.execute(_UPSERT, account_id, diary.timezone, diary.slot_minutes,
                                     diary.lead_minutes, diary.horizon_days, diary.enabled,
                                     _hours_json(diary))
            view = diary_view(account_id, await load_diary(connection, account_id))
        await self.audit.record("diary.changed", actor=actor, subject=str(account_id),
                                data={"fields": sorted(body)})
        return view

    async def add_closure(self, account_id: UUID, closed_on: Any, note: Any, *,
                          actor: UUID) -> dict[str, Any]:
        day = parse_closed_on(closed_on)
        if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE):
            raise Unprocessable(f"note must be text of at most {MAX_NOTE} characters.",
                                field="note")
        async with db.connection() as connection:
            # A closure is a day of the diary's own calendar: one already over there
            # closes nothing, so it is refused rather than kept as a puzzle.
            today = self.clock.now().astimezone(
                (await load_diary(connection, account_id)).diary.zone).date()
            if day < today:
                raise Unprocessable(f"closed_on must be today ({today.isoformat()}) or later.",
                                    code="in_the_past", field="closed_on")
            try:
                row = await connection.fetchrow(
                    "INSERT INTO diary_closure (account_id, closed_on, note) VALUES ($1, $2, $3) "
                    "RETURNING id, closed_on, note", account_id, day, note or None)
            except asyncpg.UniqueViolationError:
                raise Conflict(f"{day.isoformat()} is already closed.", code="already_closed",
                               field="closed_on") from None
        await self.audit.record("diary.closure.added", actor=actor, subject=str(account_id),
                                data={"closed_on": day.isoformat()})
        return closure_view(dict(row))

    async def remove_closure(self, account_id: UUID, closed_on: Any, *, actor: UUID) -> None:
        day = parse_closed_on(closed_on)
        async with db.connection() as connection:
            removed = await connection.fetchval(
                "DELETE FROM diary_closure WHERE account_id = $1 AND closed_on = $2 RETURNING id",
                account_id, day)
        if removed is None:
            raise NotFound(f"{day.isoformat()} is not a closure.")
        await self.audit.record("diary.closure.removed", actor=actor, subject=str(account_id),
                                data={"closed_on": day.isoformat()})
