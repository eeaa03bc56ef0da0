"""The diary over HTTP: settings and hours, closures, free slots, appointments, who may
see what (spec: telephony.md "Diary (per account)", "Appointment", "Endpoints")."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import anyio
import pytest

from app.tables import Appointment, AuditEntry
from core.diary import HORIZON_DAYS_RANGE, LEAD_MINUTES_RANGE, SLOT_MINUTES_RANGE
from tests.support.diary import LONDON_DIARY

pytestmark = pytest.mark.anyio


async def account_id(api, headers) -> str:
    return (await api.get("/api/me", headers=headers)).json()["id"]


async def put_diary(api, headers, **changes: Any) -> dict[str, Any]:
    response = await api.put("/api/diary", headers=headers, json={**LONDON_DIARY, **changes})
    assert response.status_code == 200, response.text
    return response.json()


async def book(api, headers, starts_at: str, name: str = "Jane Smith", **extra: Any):
    return await api.post("/api/diary/appointments", headers=headers, json={
        "starts_at": starts_at, "caller_name": name, "subject": "Lease renewal", **extra})


# -- settings and hours


async def test_a_new_diary_reads_the_defaults_and_offers_nothing(api, owner):
    diary = (await api.get("/api/diary", headers=owner)).json()
    assert diary["configured"] is False and diary["enabled"] is False and diary["hours"] == []
    assert (await api.get("/api/diary/slots", headers=owner)).json()["data"] == []


async def test_hours_are_replaced_wholesale_and_absent_fields_keep_their_values(api, owner):
    first = await put_diary(api, owner)
    assert first["configured"] and len(first["hours"]) == 10 and first["slot_minutes"] == 30
    second = (await api.put("/api/diary", headers=owner, json={
        "hours": [{"weekday": 5, "opens_minute": 600, "closes_minute": 660}]})).json()
    assert second["hours"] == [{"weekday": 5, "opens_minute": 600, "closes_minute": 660}]
    assert second["timezone"] == "Europe/London" and second["slot_minutes"] == 30
    kept = (await api.put("/api/diary", headers=owner, json={"lead_minutes": 0})).json()
    assert kept["hours"] == second["hours"] and kept["lead_minutes"] == 0


@pytest.mark.parametrize("changes, field", [
    ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
    ({"timezone": "localtime"}, "timezone"),
    ({"timezone": "Europe"}, "timezone"),
    ({"slot_minutes": 0}, "slot_minutes"),
    ({"slot_minutes": "30"}, "slot_minutes"),
    ({"lead_minutes": -1}, "lead_minutes"),
    ({"horizon_days": 366}, "horizon_days"),
    ({"enabled": "yes"}, "enabled"),
    ({"hours": [{"weekday": 0, "opens_minute": 600, "closes_minute": 600}]},
     "hours[0].closes_minute"),
    ({"hours": [{"weekday": 0, "opens_minute": 600, "closes_minute": 1441}]},
     "hours[0].closes_minute"),
    ({"hours": [{"weekday": 7, "opens_minute": 600, "closes_minute": 660}]}, "hours[0].weekday"),
    ({"hours": [{"weekday": 0, "opens_minute": 540, "closes_minute": 720},
                {"weekday": 0, "opens_minute": 700, "closes_minute": 800}]}, "hours[1]"),
    ({"hours": [{"weekday": 0, "opens_minute": 540}]}, "hours[0].closes_minute"),
    ({"colour": "blue"}, "colour"),
])
async def test_a_bad_diary_is_refused_naming_the_field_and_changes_nothing(api, owner, changes,
                                                                            field):
    before = await put_diary(api, owner)
    refused = await api.put("/api/diary", headers=owner, json={**LONDON_DIARY, **changes})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["field"] == field
    assert (await api.get("/api/diary", headers=owner)).json() == before


@pytest.mark.parametrize("field, span", [("slot_minutes", SLOT_MINUTES_RANGE),
                                         ("lead_minutes", LEAD_MINUTES_RANGE),
                                         ("horizon_days", HORIZON_DAYS_RANGE)])
async def test_the_documented_bounds_are_the_ones_the_diary_holds_to(api, owner, field, span):
    document = (await api.get("/openapi.json")).json()
    number = document["components"]["schemas"]["DiaryBody"]["properties"][field]["anyOf"][0]
    assert (number["minimum"], number["maximum"]) == (span.start, span.stop - 1)
    for inside in (number["minimum"], number["maximum"]):
        assert (await api.put("/api/diary", headers=owner, json={field: inside})).status_code == 200
    for outside in (number["minimum"] - 1, number["maximum"] + 1):
        refused = await api.put("/api/diary", headers=owner, json={field: outside})
        assert refused.status_code == 422 and refused.json()["error"]["field"] == field


async def test_a_diary_body_that_is_not_an_object_is_refused(api, owner):
    before = await put_diary(api, owner)
    listed = await api.put("/api/diary", headers=owner, json=[LONDON_DIARY])
    assert listed.status_code == 422
    text = await api.put("/api/diary", headers={**owner, "Content-Type": "text/plain"},
                         content=b"timezone=UTC")
    assert text.status_code == 415
    assert (await api.get("/api/diary", headers=owner)).json() == before


async def test_two_periods_on_a_day_make_a_break_and_a_day_with_none_is_closed(api, owner):
    await put_diary(api, owner, slot_minutes=60)
    slots = (await api.get("/api/diary/slots", headers=owner, params={"limit": 200})).json()
    local = [s["starts_at"] for s in slots["data"]]
    tuesday = [s[11:16] for s in local if s.startswith("2027-03-02")]
    # The lead time (an hour from 08:00 UTC, which is 08:00 in London) leaves 09:00 in.
    assert tuesday == ["09:00", "10:00", "11:00", "13:00", "14:00", "15:00", "16:00"]
    assert not any(s.startswith(("2027-03-06", "2027-03-07")) for s in local)  # weekend


async def test_touching_periods_run_on_as_one(api, owner):
    await put_diary(api, owner, slot_minutes=60, hours=[
        {"weekday": 1, "opens_minute": 540, "closes_minute": 570},
        {"weekday": 1, "opens_minute": 570, "closes_minute": 660}])
    slots = (await api.get("/api/diary/slots", headers=owner)).json()["data"]
    assert [s["starts_at"][11:16] for s in slots[:2]] == ["09:00", "10:00"]


# -- closures


async def test_a_closure_removes_its_day_and_can_be_lifted(api, owner):
    await put_diary(api, owner)
    added = await api.post("/api/diary/closures", headers=owner,
                           json={"closed_on": "2027-03-03", "note": "Staff training"})
    assert added.status_code == 201 and added.json()["note"] == "Staff training"
    again = await api.post("/api/diary/closures", headers=owner, json={"closed_on": "2027-03-03"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_closed"
    slots = (await api.get("/api/diary/slots", headers=owner, params={"limit": 200})).json()
    assert not any(s["starts_at"].startswith("2027-03-03") for s in slots["data"])
    closed = await book(api, owner, "2027-03-03T10:00:00Z")
    assert closed.status_code == 422 and closed.json()["error"]["code"] == "closed_day"
    diary = (await api.get("/api/diary", headers=owner)).json()
    assert [c["closed_on"] for c in diary["closures"]] == ["2027-03-03"]
    lifted = await api.delete("/api/diary/closures", headers=owner,
                              params={"closed_on": "2027-03-03"})
    assert lifted.status_code == 204
    assert (await book(api, owner, "2027-03-03T10:00:00Z")).status_code == 201
    gone = await api.request("DELETE", "/api/diary/closures", headers=owner,
                             json={"closed_on": "2027-03-03"})
    assert gone.status_code == 404


@pytest.mark.parametrize("closed_on", ["2027-3-3", "03/03/2027", "2027-02-30", 20270303, ""])
async def test_a_closure_needs_a_real_date(api, owner, closed_on):
    refused = await api.post("/api/diary/closures", headers=owner, json={"closed_on": closed_on})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "closed_on"
    assert (await api.get("/api/diary", headers=owner)).json()["closures"] == []


async def test_a_closure_in_the_past_of_the_diarys_calendar_is_refused(api, owner):
    await put_diary(api, owner)  # London: NOW is the morning of 2027-03-02 there
    refused = await api.post("/api/diary/closures", headers=owner,
                             json={"closed_on": "2027-03-01", "note": "Yesterday"})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == {
        "code": "in_the_past", "field": "closed_on",
        "message": "closed_on must be today (2027-03-02) or later."}
    assert (await api.get("/api/diary", headers=owner)).json()["closures"] == []
    today = await api.post("/api/diary/closures", headers=owner, json={"closed_on": "2027-03-02"})
    assert today.status_code == 201
    # In Honolulu it is still the evening of 2027-03-01: that day may yet be closed.
    await put_diary(api, owner, timezone="Pacific/Honolulu")
    there = await api.post("/api/diary/closures", headers=owner, json={"closed_on": "2027-03-01"})
    assert there.status_code == 201, there.text


# -- appointments


async def test_booking_derives_the_end_and_a_reference_and_shows_the_diary_zone(api, owner):
    await put_diary(api, owner, slot_minutes=45, hours=[
        {"weekday": 1, "opens_minute": 540, "closes_minute": 720}])
    # 2027-03-09 is still winter time in London; send it with a foreign offset.
    booked = await book(api, owner, "2027-03-09T05:15:00-04:30", contact="jane@example.org")
    assert booked.status_code == 201, booked.text
    body = booked.json()
    assert body["starts_at"] == "2027-03-09T09:45:00+00:00"
    assert body["ends_at"] == "2027-03-09T10:30:00+00:00"
    assert body["state"] == "booked" and len(body["reference"]) == 6
    assert body["contact"] == "jane@example.org" and body["timezone"] == "Europe/London"
    listed = (await api.get("/api/diary/appointments", headers=owner)).json()["data"]
    assert [a["id"] for a in listed] == [body["id"]]
    summer = await put_diary(api, owner, hours=[
        {"weekday": 1, "opens_minute": 540, "closes_minute": 720}])
    assert summer["slot_minutes"] == 30
    later = await book(api, owner, "2027-03-30T08:00:00Z")  # 09:00 in British Summer Time
    assert later.json()["starts_at"] == "2027-03-30T09:00:00+01:00"


@pytest.mark.parametrize("starts_at, code", [
    ("2027-03-02T09:30:00Z", "too_soon"),  # inside the two hours of lead time
    ("2027-03-01T10:00:00Z", "too_soon"),  # past
    ("2027-04-13T10:00:00Z", "too_far"),  # beyond thirty days
    ("2027-03-03T12:00:00Z", "not_a_slot"),  # the lunch break
    ("2027-03-03T10:10:00Z", "not_a_slot"),  # off the grid
    ("2027-03-06T10:00:00Z", "not_a_slot"),  # a Saturday
])
async def test_a_start_outside_an_open_free_slot_is_refused(api, owner, starts_at, code):
    await put_diary(api, owner, lead_minutes=120)
    refused = await book(api, owner, starts_at)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == {"code": code, "field": "starts_at",
                                       "message": refused.json()["error"]["message"]}
    assert await Appointment.count() == 0


@pytest.mark.parametrize("body, field", [
    ({"starts_at": "2027-03-03T10:00:00"}, "starts_at"),  # no offset
    ({"starts_at": "next Tuesday"}, "starts_at"),
    ({"starts_at": "2027-03-03"}, "starts_at"),
    ({"caller_name": "  "}, "caller_name"),
    ({"subject": "x" * 501}, "subject"),
    ({"contact": "x" * 201}, "contact"),
    ({"room": 4}, "room"),
])
async def test_a_bad_appointment_is_refused_naming_the_field(api, owner, body, field):
    await put_diary(api, owner)
    refused = await api.post("/api/diary/appointments", headers=owner, json={
        "starts_at": "2027-03-03T10:00:00Z", "caller_name": "Jane Smith",
        "subject": "Lease renewal", **body})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == field
    assert await Appointment.count() == 0


async def test_a_switched_off_diary_takes_no_booking(api, owner):
    await put_diary(api, owner, enabled=False)
    refused = await book(api, owner, "2027-03-03T10:00:00Z")
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "diary_off"


async def test_the_second_booking_of_a_slot_gets_409_slot_taken(api, owner):
    await put_diary(api, owner)
    assert (await book(api, owner, "2027-03-03T10:00:00Z")).status_code == 201
    second = await book(api, owner, "2027-03-03T10:00:00Z", name="John Brown")
    assert second.status_code == 409 and second.json()["error"]["code"] == "slot_taken"
    slots = (await api.get("/api/diary/slots", headers=owner, params={"limit": 200})).json()
    assert "2027-03-03T10:00:00+00:00" not in [s["starts_at"] for s in slots["data"]]


async def test_fifty_simultaneous_bookings_of_one_slot_leave_exactly_one(api, owner):
    await put_diary(api, owner)
    statuses: list[int] = []

    async def one(number: int) -> None:
        response = await book(api, owner, "2027-03-03T10:00:00Z", name=f"Caller {number}")
        statuses.append(response.status_code)
        if response.status_code == 409:
            assert response.json()["error"]["code"] == "slot_taken"

    async with anyio.create_task_group() as tasks:
        for number in range(50):
            tasks.start_soon(one, number)
    assert sorted(statuses) == [201] + [409] * 49
    assert await Appointment.count() == 1


async def test_the_database_refuses_an_overlapping_live_appointment(api, owner, services):
    """The constraint holds even for a writer that skips the checks."""
    import asyncpg

    await put_diary(api, owner)
    body = (await book(api, owner, "2027-03-03T10:00:00Z")).json()
    row = await Appointment.select().where(Appointment.id == body["id"]).first()
    overlapping = Appointment(account_id=row["account_id"], reference="XXXXXX",
                              starts_at=row["starts_at"] + dt.timedelta(minutes=10),
                              ends_at=row["ends_at"] + dt.timedelta(minutes=10),
                              caller_name="Sneaky", subject="Overlap")
    with pytest.raises(asyncpg.exceptions.ExclusionViolationError):
        await overlapping.save()


async def test_cancelling_frees_the_slot_and_a_second_cancel_changes_nothing(api, owner):
    await put_diary(api, owner)
    booked = (await book(api, owner, "2027-03-03T10:00:00Z")).json()
    cancelled = await api.delete(f"/api/diary/appointments/{booked['id']}", headers=owner)
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    again = await api.delete(f"/api/diary/appointments/{booked['id']}", headers=owner)
    assert again.status_code == 200 and again.json()["cancelled_at"] == \
        cancelled.json()["cancelled_at"]
    assert (await api.get("/api/diary/appointments", headers=owner)).json()["data"] == []
    everything = await api.get("/api/diary/appointments", headers=owner,
                               params={"include_cancelled": "true"})
    assert [a["state"] for a in everything.json()["data"]] == ["cancelled"]
    rebooked = await book(api, owner, "2027-03-03T10:00:00Z", name="John Brown")
    assert rebooked.status_code == 201
    kinds = [e["kind"] for e in await AuditEntry.select(AuditEntry.kind)]
    assert kinds.count("appointment.cancelled") == 1


async def test_moving_takes_a_free_slot_and_refuses_a_taken_one(api, owner):
    await put_diary(api, owner)
    first = (await book(api, owner, "2027-03-03T10:00:00Z")).json()
    (await book(api, owner, "2027-03-03T11:00:00Z", name="John Brown")).json()
    path = f"/api/diary/appointments/{first['id']}"
    taken = await api.patch(path, headers=owner, json={"starts_at": "2027-03-03T11:00:00Z"})
    assert taken.status_code == 409 and taken.json()["error"] == {
        "code": "slot_taken", "field": "starts_at", "message": taken.json()["error"]["message"]}
    lunch = await api.patch(path, headers=owner, json={"starts_at": "2027-03-03T12:00:00Z"})
    assert lunch.status_code == 422 and lunch.json()["error"]["code"] == "not_a_slot"
    assert (await api.patch(path, headers=owner, json={})).status_code == 422
    moved = await api.patch(path, headers=owner, json={"starts_at": "2027-03-04T14:00:00Z"})
    assert moved.status_code == 200, moved.text
    assert moved.json()["starts_at"] == "2027-03-04T14:00:00+00:00"
    assert moved.json()["state"] == "moved" and moved.json()["reference"] == first["reference"]
    freed = await book(api, owner, "2027-03-03T10:00:00Z", name="Ida Free")
    assert freed.status_code == 201  # the old slot is free again
    kinds = [e["kind"] for e in await AuditEntry.select(AuditEntry.kind)]
    assert kinds.count("appointment.moved") == 1


async def test_a_cancelled_or_unknown_appointment_cannot_be_moved(api, owner, stranger):
    await put_diary(api, owner)
    booked = (await book(api, owner, "2027-03-03T10:00:00Z")).json()
    path = f"/api/diary/appointments/{booked['id']}"
    target = {"starts_at": "2027-03-04T14:00:00Z"}
    assert (await api.patch(path, headers=stranger, json=target)).status_code == 404
    assert (await api.patch("/api/diary/appointments/nope", headers=owner,
                            json=target)).status_code == 404
    await api.delete(path, headers=owner)
    assert (await api.patch(path, headers=owner, json=target)).status_code == 404


# -- who may see what


async def test_another_ordinary_account_gets_404_everywhere(api, owner, stranger):
    await put_diary(api, owner)
    booked = (await book(api, owner, "2027-03-03T10:00:00Z")).json()
    mine = await account_id(api, owner)
    for method, path in [("GET", "/api/diary"), ("PUT", "/api/diary"),
                         ("GET", "/api/diary/slots"), ("GET", "/api/diary/appointments"),
                         ("POST", "/api/diary/appointments"), ("POST", "/api/diary/closures"),
                         ("DELETE", "/api/diary/closures")]:
        response = await api.request(method, path, headers=stranger,
                                     params={"account_id": mine}, json=LONDON_DIARY)
        assert response.status_code == 404, (method, path)
    for method in ("GET", "DELETE"):
        response = await api.request(method, f"/api/diary/appointments/{booked['id']}",
                                     headers=stranger)
        assert response.status_code == 404
    assert (await api.get("/api/diary/appointments", headers=owner)).json()["data"][0][
        "state"] == "booked"
    # The stranger's own diary is their own, and empty.
    theirs = (await api.get("/api/diary", headers=stranger)).json()
    assert theirs["configured"] is False and theirs["account_id"] != mine
    api.cookies.clear()  # signing in left the last session's cookie on the client
    assert (await api.get("/api/diary")).status_code == 401


async def test_an_administrator_addresses_another_accounts_diary(api, owner, admin):
    mine = await account_id(api, owner)
    changed = await api.put("/api/diary", headers=admin, params={"account_id": mine},
                            json=LONDON_DIARY)
    assert changed.status_code == 200 and changed.json()["account_id"] == mine
    own = await book(api, admin, "2027-03-03T10:00:00Z")  # no account_id: the admin's own
    assert own.status_code == 422 and own.json()["error"]["code"] == "diary_off"
    listed = await api.get("/api/diary/appointments", headers=admin, params={"account_id": mine})
    assert listed.json()["data"] == []
    for_owner = await api.post("/api/diary/appointments", headers=admin,
                               params={"account_id": mine},
                               json={"starts_at": "2027-03-03T10:00:00Z",
                                     "caller_name": "Jane Smith", "subject": "Lease"})
    assert for_owner.status_code == 201
    appointment = for_owner.json()["id"]
    assert (await api.get(f"/api/diary/appointments/{appointment}", headers=admin,
                          params={"account_id": mine})).status_code == 200
    # By id an administrator reaches it without naming the account; naming another
    # account's diary does not.
    assert (await api.get(f"/api/diary/appointments/{appointment}",
                          headers=admin)).json()["timezone"] == "Europe/London"
    admins_own = str(await account_id(api, admin))
    assert (await api.get(f"/api/diary/appointments/{appointment}", headers=admin,
                          params={"account_id": admins_own})).status_code == 404
    cancelled = await api.delete(f"/api/diary/appointments/{appointment}", headers=admin)
    assert cancelled.json()["state"] == "cancelled"
    nobody = await api.get("/api/diary", headers=admin,
                           params={"account_id": str(uuid.uuid4())})
    assert nobody.status_code == 404


async def test_six_simultaneous_moves_into_one_slot_leave_exactly_one(api, owner, services):
    from app.diary.appointments import SlotRefused
    from core.diary import SlotVerdict

    await put_diary(api, owner)
    ids = []
    for hour in range(9, 12):
        for minute in (0, 30):
            booked = await book(api, owner, f"2027-03-04T{hour:02d}:{minute:02d}:00Z",
                                name=f"Caller {hour} {minute}")
            ids.append(uuid.UUID(booked.json()["id"]))
    account = uuid.UUID(await account_id(api, owner))
    target = dt.datetime(2027, 3, 5, 10, 0, tzinfo=dt.UTC)
    outcomes: list[str] = []

    async def move(appointment: uuid.UUID) -> None:
        try:
            await services.diary.appointments.move(account, appointment, target)
            outcomes.append("moved")
        except SlotRefused as refused:
            assert refused.verdict is SlotVerdict.TAKEN
            outcomes.append("taken")

    async with anyio.create_task_group() as tasks:
        for appointment in ids:
            tasks.start_soon(move, appointment)
    assert sorted(outcomes) == ["moved"] + ["taken"] * (len(ids) - 1)
    at_target = await Appointment.select().where(Appointment.starts_at == target)
    assert len(at_target) == 1 and at_target[0]["state"] == "moved"


async def test_a_cancelled_appointment_cannot_be_moved(api, owner, services):
    from app.errors import NotFound

    await put_diary(api, owner)
    booked = (await book(api, owner, "2027-03-03T10:00:00Z")).json()
    await api.delete(f"/api/diary/appointments/{booked['id']}", headers=owner)
    account = uuid.UUID(await account_id(api, owner))
    with pytest.raises(NotFound):
        await services.diary.appointments.move(account, uuid.UUID(booked["id"]),
                                               dt.datetime(2027, 3, 4, 10, tzinfo=dt.UTC))
    [row] = await Appointment.select()
    assert row["state"] == "cancelled" and row["starts_at"].hour == 10 and row["starts_at"].day == 3
