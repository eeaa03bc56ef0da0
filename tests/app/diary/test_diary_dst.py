"""Clock changes through the HTTP API: an hour that does not exist is never offered, a
repeated hour is offered once, and times are shown with the diary zone's offset
(spec: telephony.md "Diary (per account)"). Europe/London and America/New_York move
by an hour; Australia/Lord_Howe moves by thirty minutes."""

from __future__ import annotations

import datetime as dt

import pytest

pytestmark = pytest.mark.anyio

# Sundays only, 00:00 to 05:00, half-hour slots: every clock change below falls inside.
SUNDAY_NIGHT = [{"weekday": 6, "opens_minute": 0, "closes_minute": 300}]
ALL_NIGHT = ["00:00", "00:30", "01:00", "01:30", "02:00", "02:30", "03:00", "03:30",
             "04:00", "04:30"]


def _without(*missing: str) -> list[str]:
    return [t for t in ALL_NIGHT if t not in missing]


# zone, the Sunday of the change, the local times offered, the offset of each
CASES = [
    # Clocks go forward at 01:00 GMT to 02:00 BST: 01:00 and 01:30 do not exist.
    ("Europe/London", "2027-03-28", _without("01:00", "01:30"),
     ["+00:00"] * 2 + ["+01:00"] * 6),
    # Clocks go back at 02:00 BST to 01:00 GMT: 01:00 and 01:30 happen twice, offered once.
    ("Europe/London", "2027-10-31", ALL_NIGHT, ["+01:00"] * 4 + ["+00:00"] * 6),
    ("America/New_York", "2027-03-14", _without("02:00", "02:30"),
     ["-05:00"] * 4 + ["-04:00"] * 4),
    ("America/New_York", "2027-11-07", ALL_NIGHT, ["-04:00"] * 4 + ["-05:00"] * 6),
    # Lord Howe Island moves half an hour: at 02:00 (+11:00) back to 01:30 (+10:30)...
    ("Australia/Lord_Howe", "2027-04-04", ALL_NIGHT, ["+11:00"] * 4 + ["+10:30"] * 6),
    # ...and at 02:00 (+10:30) forward to 02:30 (+11:00): 02:00 does not exist.
    ("Australia/Lord_Howe", "2027-10-03", _without("02:00"), ["+10:30"] * 4 + ["+11:00"] * 5),
]


async def _diary_for(api, services, zone: str, day: str) -> dict[str, str]:
    sunday = dt.date.fromisoformat(day)
    services.diary.clock.now = lambda: dt.datetime.combine(
        sunday - dt.timedelta(days=5), dt.time(12), dt.UTC)
    owner = await api.as_new_user(services, "ann@example.org")
    written = await api.put("/api/diary", headers=owner, json={
        "timezone": zone, "slot_minutes": 30, "lead_minutes": 0, "horizon_days": 30,
        "enabled": True, "hours": SUNDAY_NIGHT})
    assert written.status_code == 200, written.text
    return owner


async def _offered_on(api, owner, day: str) -> list[str]:
    slots = (await api.get("/api/diary/slots", headers=owner, params={"limit": 200})).json()
    return [s["starts_at"] for s in slots["data"] if s["starts_at"].startswith(day)]


@pytest.mark.parametrize("zone, day, times, offsets", CASES)
async def test_free_slots_across_a_clock_change(api, services, zone, day, times, offsets):
    owner = await _diary_for(api, services, zone, day)
    offered = await _offered_on(api, owner, day)
    assert [s[11:16] for s in offered] == times
    assert [s[19:] for s in offered] == offsets
    # Every slot lasts exactly half an hour of real time.
    slots = (await api.get("/api/diary/slots", headers=owner, params={"limit": 200})).json()
    for slot in slots["data"]:
        length = dt.datetime.fromisoformat(slot["ends_at"]) - dt.datetime.fromisoformat(
            slot["starts_at"])
        assert length == dt.timedelta(minutes=30)


@pytest.mark.parametrize("zone, day, first_pass, second_pass", [
    ("Europe/London", "2027-10-31", "2027-10-31T01:30:00+01:00", "2027-10-31T01:30:00+00:00"),
    ("America/New_York", "2027-11-07", "2027-11-07T01:00:00-04:00", "2027-11-07T01:00:00-05:00"),
    ("Australia/Lord_Howe", "2027-04-04", "2027-04-04T01:30:00+11:00",
     "2027-04-04T01:30:00+10:30"),
])
async def test_a_repeated_hour_books_only_at_its_first_pass(api, services, zone, day,
                                                            first_pass, second_pass):
    owner = await _diary_for(api, services, zone, day)
    body = {"caller_name": "Jane Smith", "subject": "Night shift"}
    second = await api.post("/api/diary/appointments", headers=owner,
                            json={"starts_at": second_pass, **body})
    assert second.status_code == 422 and second.json()["error"]["code"] == "not_a_slot"
    first = await api.post("/api/diary/appointments", headers=owner,
                           json={"starts_at": first_pass, **body})
    assert first.status_code == 201, first.text
    assert first.json()["starts_at"] == first_pass  # shown in the diary's zone
    ends = dt.datetime.fromisoformat(first.json()["ends_at"])
    assert ends - dt.datetime.fromisoformat(first_pass) == dt.timedelta(minutes=30)
    assert first_pass not in await _offered_on(api, owner, day)


@pytest.mark.parametrize("zone, old_offset, real_wall_time", [
    # A client that keeps the offset from before the change names an instant whose real
    # wall time is later: that is the slot booked, and shown as such.
    ("Europe/London", "2027-03-28T01:30:00+00:00", "2027-03-28T02:30:00+01:00"),
    ("America/New_York", "2027-03-14T02:30:00-05:00", "2027-03-14T03:30:00-04:00"),
    ("Australia/Lord_Howe", "2027-10-03T02:00:00+10:30", "2027-10-03T02:30:00+11:00"),
])
async def test_a_wall_time_that_does_not_exist_is_never_booked(api, services, zone, old_offset,
                                                               real_wall_time):
    owner = await _diary_for(api, services, zone, old_offset[:10])
    booked = await api.post("/api/diary/appointments", headers=owner, json={
        "starts_at": old_offset, "caller_name": "Jane Smith", "subject": "Night shift"})
    assert booked.status_code == 201, booked.text
    assert booked.json()["starts_at"] == real_wall_time
    taken = await api.post("/api/diary/appointments", headers=owner, json={
        "starts_at": real_wall_time, "caller_name": "John Brown", "subject": "Night shift"})
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "slot_taken"
