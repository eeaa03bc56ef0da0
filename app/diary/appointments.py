"""Appointments: booking, moving and cancelling, through the API or on a call.

spec: telephony.md "Appointment" (the state table), "Diary (per account)" ("two
callers cannot take one slot", "appointments are shown in the diary's own zone
everywhere"), "Outward notifications".

How a slot stays single: the booking transaction checks the start with
``core.diary.check_slot`` (open hours, lead, horizon, closures, the clock change
rules) and inserts; the exclusion constraint ``appointment_slot_free`` on the live
appointments' time ranges is what makes a second booking of the slot fail however the
two transactions interleave. Its violation (and the deadlock PostgreSQL may break
between two such inserts) becomes ``SlotRefused(TAKEN)``: 409 ``slot_taken`` in the
API, "that time has just gone" on a call.

Every change of state goes through ``core.diary.transition`` and writes its event to
the outbox (``app.notify.outbox.enqueue``) in the same transaction, so an event is
sent exactly when its change is stored.
"""

from __future__ import annotations

__all__ = ["Appointments", "Booking", "SlotRefused", "appointment_view", "parse_instant"]

import datetime as dt
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from uuid import UUID

import asyncpg

from app import db
from app.diary.clock import Clock
from app.diary.diaries import StoredDiary, load_diary
from app.errors import Conflict, NotFound, Unprocessable
from app.notify.outbox import enqueue
from app.services.access import parse_id
from app.services.audit import AuditLog
from app.services.listing import equals, listing_query, where
from core.diary import (
    REFERENCE_BYTES,
    AppointmentEffect,
    AppointmentInput,
    AppointmentState,
    Slot,
    SlotVerdict,
    check_slot,
    ends_at_for,
    free_slots,
    reference_from,
    show_in_zone,
    speak_time,
    transition,
)
from core.errors import LocalProtocolError
from core.notifications import EventKind, notification_text
from core.records import frozen

MAX_NAME, MAX_SUBJECT, MAX_CONTACT = 200, 500, 200
_REFERENCE_TRIES = 8  # ~47 million references: a clash is rare, eight in a row never
_DEADLOCK_TRIES = 3
_Result = TypeVar("_Result")

_COLUMNS = """
id, account_id, reference, starts_at, ends_at, caller_name, subject, contact, caller_number,
state, call_id, created_at, updated_at, cancelled_at
"""
# Live appointments near the window a slot can fall in (the check needs no others).
_BOOKED = """
SELECT starts_at, ends_at FROM appointment
WHERE account_id = $1 AND state <> 'cancelled' AND ends_at > $2 AND starts_at < $3
  AND id IS DISTINCT FROM $4
"""
_INSERT = f"""
INSERT INTO appointment (account_id, reference, starts_at, ends_at, caller_name, subject,
                         contact, caller_number, call_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {_COLUMNS}
"""

_VERDICT_TEXT = {
    SlotVerdict.DIARY_OFF: "The diary is not taking bookings.",
    SlotVerdict.NOT_A_SLOT: "starts_at is not the start of an open slot of the diary.",
    SlotVerdict.CLOSED_DAY: "The diary is closed that day.",
    SlotVerdict.TOO_SOON: "starts_at is sooner than the diary's lead time allows.",
    SlotVerdict.TOO_FAR: "starts_at is further ahead than the diary's horizon allows.",
    SlotVerdict.TAKEN: "That time has gone: another appointment holds it.",
}


class SlotRefused(Exception):
    """A start that cannot be booked; ``verdict`` says why."""

    def __init__(self, verdict: SlotVerdict) -> None:
        super().__init__(_VERDICT_TEXT[verdict])
        self.verdict = verdict

    def api_error(self) -> Conflict | Unprocessable:
        if self.verdict is SlotVerdict.TAKEN:
            return Conflict(str(self), code="slot_taken", field="starts_at")
        return Unprocessable(str(self), code=self.verdict.value, field="starts_at")


@frozen
class Booking:
    """What a booking needs besides its start. ``caller_number`` (E.164) and
    ``call_id`` are set when it is made on a call."""

    caller_name: str
    subject: str
    contact: str | None = None
    caller_number: str | None = None
    call_id: UUID | None = None


def parse_instant(value: Any, field: str = "starts_at") -> dt.datetime:
    """An RFC 3339 instant with its offset (``Z`` or ``+01:00``), else 422."""
    problem = f"{field} must be an RFC 3339 time with an offset, e.g. 2027-03-02T14:30:00Z."
    if not isinstance(value, str) or len(value) < 20 or value[10] not in "Tt ":
        raise Unprocessable(problem, field=field)
    try:
        instant = dt.datetime.fromisoformat(value.upper())
    except ValueError:
        raise Unprocessable(problem, field=field) from None
    if instant.tzinfo is None:
        raise Unprocessable(problem, field=field)
    return instant.astimezone(dt.UTC)


def _required_text(value: Any, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > limit:
        raise Unprocessable(f"{field} must be text of 1 to {limit} characters.", field=field)
    return value.strip()


def check_booking(caller_name: Any, subject: Any, contact: Any) -> tuple[str, str, str | None]:
    """The booking's text fields trimmed, or 422 naming the first one that is wrong."""
    return (_required_text(caller_name, "caller_name", MAX_NAME),
            _required_text(subject, "subject", MAX_SUBJECT),
            None if contact is None else _required_text(contact, "contact", MAX_CONTACT))


def appointment_view(row: dict[str, Any], timezone: str) -> dict[str, Any]:
    """An appointment as the API shows it: its times in the diary's zone."""
    return {
        "id": str(row["id"]),
        "reference": row["reference"],
        "starts_at": show_in_zone(row["starts_at"], timezone),
        "ends_at": show_in_zone(row["ends_at"], timezone),
        "timezone": timezone,
        "caller_name": row["caller_name"],
        "subject": row["subject"],
        "contact": row["contact"],
        "caller_number": row["caller_number"],
        "state": row["state"],
        "call_id": str(row["call_id"]) if row["call_id"] else None,
        "created_at": show_in_zone(row["created_at"], timezone),
        "cancelled_at": show_in_zone(row["cancelled_at"], timezone) if row["cancelled_at"] else None,
    }


async def _retried(attempt: Callable[[], Awaitable[_Result]]) -> _Result:
    """Run one booking transaction, again after a deadlock. Two writers into one slot
    can each wait for the other's index entry; PostgreSQL then aborts one of them.
    Trying again finds the slot taken (or free, if the other was rolled back)."""
    for _ in range(_DEADLOCK_TRIES):
        try:
            return await attempt()
        except asyncpg.DeadlockDetectedError:
            continue
    raise SlotRefused(SlotVerdict.TAKEN)


class Appointments:
    """The use cases of appointments, shared by the API and the call tools."""

    def __init__(self, audit: AuditLog, clock: Clock) -> None:
        self.audit = audit
        self.clock = clock

    # -- reading

    async def list(self, account_id: UUID, *, include_cancelled: bool = False,
                   since: dt.datetime | None = None) -> list[dict[str, Any]]:
        """The account's appointments, soonest first; by default the live ones."""
        sql, args = listing_query(
            f"SELECT {_COLUMNS} FROM appointment",
            [equals("account_id", account_id),
             None if include_cancelled else where("state <> 'cancelled'"),
             None if since is None else where("ends_at > {}", since)],
            order_by="starts_at, id")
        async with db.connection() as connection:
            timezone = (await load_diary(connection, account_id)).diary.timezone
            rows = await connection.fetch(sql, *args)
        return [appointment_view(dict(row), timezone) for row in rows]

    async def get(self, account_id: UUID | None, appointment_id: str | UUID) -> dict[str, Any]:
        """One appointment of ``account_id`` (of any account for None: an administrator)."""
        async with db.connection() as connection:
            row = await connection.fetchrow(
                f"SELECT {_COLUMNS} FROM appointment WHERE id = $1 "
                "AND ($2::uuid IS NULL OR account_id = $2)",
                parse_id(appointment_id, "appointment"), account_id)
            if row is None:
                raise NotFound("No such appointment.")
            timezone = (await load_diary(connection, row["account_id"])).diary.timezone
        return appointment_view(dict(row), timezone)

    async def free(self, account_id: UUID, *, since: dt.datetime | None = None,
                   limit: int | None = None) -> tuple[list[Slot], StoredDiary, dt.datetime]:
        """The free slots from ``since`` (now when None), soonest first: the slots, the
        diary they belong to, and the "now" they were computed at."""
        now = self.clock.now()
        async with db.connection() as connection:
            stored = await load_diary(connection, account_id)
            booked = [(r["starts_at"], r["ends_at"]) for r in await connection.fetch(
                _BOOKED, account_id, now - dt.timedelta(days=1),
                now + dt.timedelta(days=stored.diary.horizon_days + 1), None)]
        slots = free_slots(stored.diary, stored.closed_dates, booked, now)
        # free_slots counts lead and horizon from the real now; a later ``since`` only
        # leaves out what comes before it.
        if since is not None:
            slots = [slot for slot in slots if slot[0] >= since]
        return slots[:limit] if limit is not None else slots, stored, now

    async def by_reference(self, account_id: UUID, reference: str) -> dict[str, Any] | None:
        async with db.connection() as connection:
            row = await connection.fetchrow(
                f"SELECT {_COLUMNS} FROM appointment WHERE account_id = $1 AND reference = $2",
                account_id, reference)
        return dict(row) if row else None

    # -- changing

    async def book(self, account_id: UUID, starts_at: dt.datetime,
                   booking: Booking) -> tuple[dict[str, Any], StoredDiary]:
        """Book ``starts_at``: the stored row and the diary it was checked against.
        Raises ``SlotRefused``."""
        return await _retried(lambda: self._book_once(account_id, starts_at, booking))

    async def _book_once(self, account_id: UUID, starts_at: dt.datetime,
                         booking: Booking) -> tuple[dict[str, Any], StoredDiary]:
        now = self.clock.now()
        async with db.connection() as connection, connection.transaction():
            stored = await load_diary(connection, account_id)
            await self._check(connection, account_id, stored, starts_at, now, None)
            ends_at = ends_at_for(stored.diary, starts_at)
            row = await self._insert(connection, account_id, starts_at, ends_at, booking)
            effect, _ = transition(AppointmentState.NONE, AppointmentInput.BOOK)
            await self._notify(connection, account_id, effect, row, stored, now)
        return row, stored

    async def _check(self, connection: asyncpg.Connection, account_id: UUID,
                     stored: StoredDiary, starts_at: dt.datetime, now: dt.datetime,
                     moving: UUID | None) -> None:
        diary = stored.diary
        window_end = now + dt.timedelta(days=diary.horizon_days + 1)
        booked = [(r["starts_at"], r["ends_at"]) for r in await connection.fetch(
            _BOOKED, account_id, now - dt.timedelta(days=1), window_end, moving)]
        verdict = check_slot(diary, stored.closed_dates, booked, starts_at, now)
        if verdict is not SlotVerdict.OPEN:
            raise SlotRefused(verdict)

    async def _insert(self, connection: asyncpg.Connection, account_id: UUID,
                      starts_at: dt.datetime, ends_at: dt.datetime,
                      booking: Booking) -> dict[str, Any]:
        for _ in range(_REFERENCE_TRIES):
            reference = reference_from(secrets.token_bytes(REFERENCE_BYTES))
            try:
                async with connection.transaction():  # a savepoint: a clash keeps the rest
                    row = await connection.fetchrow(
                        _INSERT, account_id, reference, starts_at, ends_at, booking.caller_name,
                        booking.subject, booking.contact, booking.caller_number or None,
                        booking.call_id)
                return dict(row)
            except asyncpg.ExclusionViolationError:
                raise SlotRefused(SlotVerdict.TAKEN) from None
            except asyncpg.UniqueViolationError:
                continue  # the reference is in use in this diary: draw another
        raise RuntimeError("no free booking reference after several draws")

    async def _notify(self, connection: asyncpg.Connection, account_id: UUID,
                      effect: AppointmentEffect, row: dict[str, Any], stored: StoredDiary,
                      now: dt.datetime) -> None:
        if effect is AppointmentEffect.IGNORE:
            return
        text = notification_text(
            EventKind(effect.value), caller_name=row["caller_name"],
            caller_number=row["caller_number"], subject=row["subject"],
            appointment_time=speak_time(row["starts_at"], stored.diary.zone, now))
        await enqueue(connection, account_id=account_id, event=effect.value, text=text,
                      subject_id=row["id"])

    async def move(self, account_id: UUID, appointment_id: UUID,
                   starts_at: dt.datetime) -> tuple[dict[str, Any], StoredDiary]:
        """Move a live appointment to ``starts_at``. Raises ``SlotRefused``, or
        ``NotFound`` when it is not live."""
        return await _retried(lambda: self._move_once(account_id, appointment_id, starts_at))

    async def _move_once(self, account_id: UUID, appointment_id: UUID,
                         starts_at: dt.datetime) -> tuple[dict[str, Any], StoredDiary]:
        now = self.clock.now()
        async with db.connection() as connection, connection.transaction():
            row = await self._lock(connection, account_id, appointment_id)
            effect, target = self._transition(row, AppointmentInput.MOVE)
            stored = await load_diary(connection, account_id)
            await self._check(connection, account_id, stored, starts_at, now, row["id"])
            try:
                async with connection.transaction():
                    moved = await connection.fetchrow(
                        f"UPDATE appointment SET starts_at = $2, ends_at = $3, state = $4, "
                        f"updated_at = now() WHERE id = $1 RETURNING {_COLUMNS}",
                        row["id"], starts_at, ends_at_for(stored.diary, starts_at), target.value)
            except asyncpg.ExclusionViolationError:
                raise SlotRefused(SlotVerdict.TAKEN) from None
            await self._notify(connection, account_id, effect, dict(moved), stored, now)
        return dict(moved), stored

    async def cancel(self, account_id: UUID | None, appointment_id: str | UUID, *,
                     actor: UUID | None = None) -> tuple[dict[str, Any], StoredDiary]:
        """Cancel an appointment of ``account_id`` (of any account for None: an
        administrator); cancelling a cancelled one changes nothing."""
        now = self.clock.now()
        async with db.connection() as connection, connection.transaction():
            row = await self._lock(connection, account_id,
                                   parse_id(appointment_id, "appointment"))
            effect, target = self._transition(row, AppointmentInput.CANCEL)
            stored = await load_diary(connection, row["account_id"])
            if effect is not AppointmentEffect.IGNORE:
                row = dict(await connection.fetchrow(
                    f"UPDATE appointment SET state = $2, cancelled_at = now(), updated_at = now() "
                    f"WHERE id = $1 RETURNING {_COLUMNS}", row["id"], target.value))
                await self._notify(connection, row["account_id"], effect, row, stored, now)
        if actor is not None and effect is not AppointmentEffect.IGNORE:
            await self.audit.record("appointment.cancelled", actor=actor,
                                    subject=str(row["id"]))
        return row, stored

    async def _lock(self, connection: asyncpg.Connection, account_id: UUID | None,
                    appointment_id: UUID) -> dict[str, Any]:
        row = await connection.fetchrow(
            f"SELECT {_COLUMNS} FROM appointment WHERE id = $1 "
            "AND ($2::uuid IS NULL OR account_id = $2) FOR UPDATE", appointment_id, account_id)
        if row is None:
            raise NotFound("No such appointment.")
        return dict(row)

    @staticmethod
    def _transition(row: dict[str, Any],
                    given: AppointmentInput) -> tuple[AppointmentEffect, AppointmentState]:
        try:
            return transition(AppointmentState(row["state"]), given)
        except LocalProtocolError:  # no such move: a cancelled appointment cannot move
            raise NotFound("No such appointment.") from None
