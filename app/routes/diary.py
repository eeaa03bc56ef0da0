"""The diary: settings and hours, closures, appointments (owner or administrator).

spec: telephony.md "Endpoints" — ``/api/diary`` (GET, PUT), ``/api/diary/closures``
(POST, DELETE), ``/api/diary/appointments`` (GET, POST) and
``/api/diary/appointments/{id}`` (DELETE cancels; PATCH with ``starts_at`` moves it, as
a caller may on a call — the spec lists no move by API, and the console needs one). Each acts on the caller's own
diary; an administrator may name another account with ``?account_id=``; anyone else
naming one gets 404. Handlers parse, authorise, call ``svc.diary`` and render.
"""

from __future__ import annotations

from typing import Any

from blacksheep import Request, Response, Router
from pydantic import Field

from app.diary.appointments import (
    Booking,
    SlotRefused,
    appointment_view,
    check_booking,
    parse_instant,
)
from app.bundle import Services
from app.errors import Unprocessable
from app.http.bodies import Body, read_body, read_json_value
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import addressed_account, query_value, signed_in
from app.http.query_values import whole_number
from app.services.access import parse_id
from core.diary import (HORIZON_DAYS_RANGE, LEAD_MINUTES_RANGE, SLOT_MINUTES_RANGE,
                        show_in_zone)

MAX_SLOTS = 200


class OpeningPeriodBody(Body):
    weekday: int
    opens_minute: int
    closes_minute: int


def _within(span: range) -> Any:
    """A field documented with the bounds ``core.diary`` holds it to (a range of
    whole numbers, step 1)."""
    assert span.step == 1
    return Field(default=None, ge=span.start, le=span.stop - 1)


class DiaryBody(Body):
    """Documentation of PUT /api/diary; ``core.diary.parse_diary`` checks the body."""

    timezone: str | None = None
    slot_minutes: int | None = _within(SLOT_MINUTES_RANGE)
    lead_minutes: int | None = _within(LEAD_MINUTES_RANGE)
    horizon_days: int | None = _within(HORIZON_DAYS_RANGE)
    enabled: bool | None = None
    hours: list[OpeningPeriodBody] | None = None


class ClosureBody(Body):
    closed_on: str
    note: str | None = None


class MoveBody(Body):
    starts_at: str


class AppointmentBody(Body):
    starts_at: str
    caller_name: str
    subject: str
    contact: str | None = None


async def _owner(request: Request, svc: Services):
    identity = await signed_in(request, svc)
    return identity, await addressed_account(request, svc, identity)


async def get_diary(request: Request, svc: Services) -> Response:
    _, account_id = await _owner(request, svc)
    return json_response(200, await svc.diary.diaries.get(account_id))


@accepts(DiaryBody)
async def put_diary(request: Request, svc: Services) -> Response:
    identity, account_id = await _owner(request, svc)
    body = await read_json_value(request, svc.max_body_bytes)
    return json_response(200, await svc.diary.diaries.put(account_id, body,
                                                           actor=identity.account_id))


@accepts(ClosureBody)
async def add_closure(request: Request, svc: Services) -> Response:
    identity, account_id = await _owner(request, svc)
    body = await read_body(request, ClosureBody, svc.max_body_bytes)
    return json_response(201, await svc.diary.diaries.add_closure(
        account_id, body.closed_on, body.note, actor=identity.account_id))


async def remove_closure(request: Request, svc: Services) -> None:
    """``closed_on`` in the query, or in a JSON body like the one that added it."""
    identity, account_id = await _owner(request, svc)
    closed_on = query_value(request, "closed_on")
    if closed_on is None and request.content_type():
        closed_on = (await read_body(request, ClosureBody, svc.max_body_bytes)).closed_on
    if closed_on is None:
        raise Unprocessable("Name the day: closed_on=YYYY-MM-DD.", code="required",
                            field="closed_on")
    await svc.diary.diaries.remove_closure(account_id, closed_on, actor=identity.account_id)


async def list_appointments(request: Request, svc: Services) -> Response:
    """Live appointments soonest first; ``?include_cancelled=true`` adds the cancelled,
    ``?from=<RFC 3339>`` leaves out those that ended before it."""
    _, account_id = await _owner(request, svc)
    since = query_value(request, "from")
    include = query_value(request, "include_cancelled")
    if include not in (None, "true", "false"):
        raise Unprocessable("include_cancelled must be true or false.", field="include_cancelled")
    rows = await svc.diary.appointments.list(
        account_id, include_cancelled=include == "true",
        since=parse_instant(since, "from") if since is not None else None)
    return json_response(200, {"data": rows})


async def list_free_slots(request: Request, svc: Services) -> Response:
    """The times a caller could book now, in the diary's zone: ``?from=<RFC 3339>``
    (default now) and ``?limit=`` (default 20, at most 200)."""
    _, account_id = await _owner(request, svc)
    since = query_value(request, "from")
    limit = whole_number(query_value(request, "limit"), "limit", default=20, most=MAX_SLOTS)
    slots, stored, _ = await svc.diary.appointments.free(
        account_id, since=parse_instant(since, "from") if since is not None else None,
        limit=limit)
    zone = stored.diary.timezone
    return json_response(200, {"timezone": zone, "data": [
        {"starts_at": show_in_zone(start, zone), "ends_at": show_in_zone(end, zone)}
        for start, end in slots]})


@accepts(AppointmentBody)
async def book_appointment(request: Request, svc: Services) -> Response:
    identity, account_id = await _owner(request, svc)
    body = await read_body(request, AppointmentBody, svc.max_body_bytes)
    starts_at = parse_instant(body.starts_at)
    caller_name, subject, contact = check_booking(body.caller_name, body.subject, body.contact)
    try:
        row, stored = await svc.diary.appointments.book(
            account_id, starts_at, Booking(caller_name, subject, contact))
    except SlotRefused as refused:
        raise refused.api_error() from None
    await svc.audit.record("appointment.booked", actor=identity.account_id,
                           subject=str(row["id"]))
    return json_response(201, appointment_view(row, stored.diary.timezone))


async def _appointment_owner(request: Request, svc: Services):
    """By id, an administrator reaches any account's appointment; ``?account_id=`` still
    narrows it to that account's diary."""
    identity, account_id = await _owner(request, svc)
    if identity.is_admin and query_value(request, "account_id") is None:
        return identity, None
    return identity, account_id


async def get_appointment(request: Request, svc: Services, appointment_id: str) -> Response:
    _, account_id = await _appointment_owner(request, svc)
    return json_response(200, await svc.diary.appointments.get(account_id, appointment_id))


async def cancel_appointment(request: Request, svc: Services, appointment_id: str) -> Response:
    identity, account_id = await _appointment_owner(request, svc)
    row, stored = await svc.diary.appointments.cancel(account_id, appointment_id,
                                                      actor=identity.account_id)
    return json_response(200, appointment_view(row, stored.diary.timezone))


@accepts(MoveBody)
async def move_appointment(request: Request, svc: Services, appointment_id: str) -> Response:
    """To another free slot of the same diary: the same checks as a booking, through
    ``Appointments.move`` (so the exclusion constraint still keeps a slot single)."""
    identity, account_id = await _owner(request, svc)
    body = await read_body(request, MoveBody, svc.max_body_bytes)
    starts_at = parse_instant(body.starts_at)
    try:
        row, stored = await svc.diary.appointments.move(
            account_id, parse_id(appointment_id, "appointment"), starts_at)
    except SlotRefused as refused:
        raise refused.api_error() from None
    await svc.audit.record("appointment.moved", actor=identity.account_id,
                           subject=str(row["id"]))
    return json_response(200, appointment_view(row, stored.diary.timezone))


def register(router: Router) -> None:
    router.add_get("/api/diary", get_diary)
    router.add_put("/api/diary", put_diary)
    router.add_post("/api/diary/closures", add_closure)
    router.add_delete("/api/diary/closures", remove_closure)
    router.add_get("/api/diary/slots", list_free_slots)
    router.add_get("/api/diary/appointments", list_appointments)
    router.add_post("/api/diary/appointments", book_appointment)
    router.add_get("/api/diary/appointments/{appointment_id}", get_appointment)
    router.add_patch("/api/diary/appointments/{appointment_id}", move_appointment)
    router.add_delete("/api/diary/appointments/{appointment_id}", cancel_appointment)
