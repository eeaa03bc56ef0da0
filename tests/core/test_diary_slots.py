"""Free slots and booking checks across clock changes (spec: telephony.md "Diary (per
account)": "a non-existent hour at a clock change is never offered and a repeated hour
is offered once"; "two callers cannot take one slot")."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.diary import (
    Diary,
    OpeningPeriod,
    SlotVerdict,
    check_slot,
    ends_at_for,
    free_slots,
    slot_is_bookable,
    speak_time,
)
from core.errors import LocalProtocolError


def diary(zone="Europe/London", slot=30, lead=0, horizon=7, hours=(), enabled=True):
    return Diary(zone, slot, lead, horizon, enabled, tuple(OpeningPeriod(*p) for p in hours))


def walls(slots, zone):
    """Local wall times of the slot starts, as "YYYY-MM-DD HH:MM"."""
    return [start.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M") for start, _ in slots]


WEEKDAYS_9_TO_5 = [(day, 540, 1020) for day in range(5)]
MONDAY_10_MARCH = datetime(2025, 3, 10, 0, 0, tzinfo=UTC)


def test_slots_fill_each_period_in_steps_of_the_slot_length():
    book = diary(slot=45, horizon=1, hours=[(0, 540, 720), (0, 780, 900)])
    assert walls(free_slots(book, set(), [], MONDAY_10_MARCH), "Europe/London") == [
        "2025-03-10 09:00",
        "2025-03-10 09:45",
        "2025-03-10 10:30",
        "2025-03-10 11:15",  # ends 12:00; 12:00 would end 12:45, after closing
        "2025-03-10 13:00",
        "2025-03-10 13:45",  # ends 14:30; 14:30 would end 15:15, after 15:00
    ]


def test_periods_that_touch_are_one_period_for_the_slots():
    joined = diary(slot=45, horizon=1, hours=[(0, 540, 600), (0, 600, 720)])
    whole = diary(slot=45, horizon=1, hours=[(0, 540, 720)])
    assert free_slots(joined, set(), [], MONDAY_10_MARCH) == free_slots(
        whole, set(), [], MONDAY_10_MARCH
    )


def test_each_slot_lasts_slot_minutes_and_is_returned_in_utc():
    slots = free_slots(diary(hours=WEEKDAYS_9_TO_5), set(), [], MONDAY_10_MARCH)
    assert len(slots) == 5 * 16
    for start, end in slots:
        assert start.tzinfo is UTC and end.tzinfo is UTC
        assert end - start == timedelta(minutes=30)
        assert ends_at_for(diary(), start) == end


def test_a_switched_off_diary_offers_nothing():
    book = diary(hours=WEEKDAYS_9_TO_5, enabled=False)
    assert free_slots(book, set(), [], MONDAY_10_MARCH) == []
    start = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)
    assert check_slot(book, set(), [], start, MONDAY_10_MARCH) is SlotVerdict.DIARY_OFF


def test_lead_and_horizon_bound_the_slots():
    now = datetime(2025, 3, 10, 9, 10, tzinfo=UTC)  # Monday 9:10 in London (GMT)
    book = diary(lead=50, horizon=2, hours=WEEKDAYS_9_TO_5)
    found = walls(free_slots(book, set(), [], now), "Europe/London")
    assert found[0] == "2025-03-10 10:00"  # 9:30 is 20 minutes away, inside the lead
    # The horizon ends two days on at 9:10, exclusive: 9:00 is offered, 9:30 is not.
    assert found[-1] == "2025-03-12 09:00"
    assert len(found) == 14 + 16 + 1
    assert check_slot(book, set(), [], datetime(2025, 3, 10, 9, 30, tzinfo=UTC), now) is (
        SlotVerdict.TOO_SOON
    )
    assert check_slot(book, set(), [], datetime(2025, 3, 10, 10, 0, tzinfo=UTC), now) is (
        SlotVerdict.OPEN
    )
    assert check_slot(book, set(), [], datetime(2025, 3, 12, 9, 30, tzinfo=UTC), now) is (
        SlotVerdict.TOO_FAR
    )


def test_the_lead_boundary_is_inclusive():
    now = datetime(2025, 3, 10, 8, 0, tzinfo=UTC)
    book = diary(lead=60, horizon=1, hours=WEEKDAYS_9_TO_5)
    assert free_slots(book, set(), [], now)[0][0] == datetime(2025, 3, 10, 9, 0, tzinfo=UTC)


def test_closures_are_local_dates():
    # 23:30 on Monday in New York is already Tuesday in UTC.
    book = diary("America/New_York", slot=60, hours=[(0, 1380, 1440), (1, 540, 600)])
    closed = {date(2025, 3, 11)}
    found = walls(free_slots(book, closed, [], MONDAY_10_MARCH), "America/New_York")
    assert found == ["2025-03-10 23:00"]
    tuesday_nine = datetime(2025, 3, 11, 13, 0, tzinfo=UTC)
    assert check_slot(book, closed, [], tuesday_nine, MONDAY_10_MARCH) is SlotVerdict.CLOSED_DAY


def test_any_overlap_with_a_booking_removes_a_slot():
    book = diary(slot=30, horizon=1, hours=[(0, 540, 720)])
    booked = [
        (datetime(2025, 3, 10, 9, 45, tzinfo=UTC), datetime(2025, 3, 10, 10, 5, tzinfo=UTC)),
        (datetime(2025, 3, 10, 11, 0, tzinfo=UTC), datetime(2025, 3, 10, 11, 30, tzinfo=UTC)),
    ]
    found = walls(free_slots(book, set(), booked, MONDAY_10_MARCH), "Europe/London")
    assert found == ["2025-03-10 09:00", "2025-03-10 10:30", "2025-03-10 11:30"]
    taken = datetime(2025, 3, 10, 11, 0, tzinfo=UTC)
    assert check_slot(book, set(), booked, taken, MONDAY_10_MARCH) is SlotVerdict.TAKEN
    assert not slot_is_bookable(book, set(), booked, taken, MONDAY_10_MARCH)


def test_bookings_may_be_given_in_any_zone_and_order():
    book = diary(slot=30, horizon=1, hours=[(0, 540, 600)])
    paris = ZoneInfo("Europe/Paris")
    booked = [
        (datetime(2025, 3, 10, 10, 30, tzinfo=paris), datetime(2025, 3, 10, 11, 0, tzinfo=paris)),
        (datetime(2025, 3, 10, 9, 0, tzinfo=UTC), datetime(2025, 3, 10, 9, 1, tzinfo=UTC)),
    ]
    assert free_slots(book, set(), booked, MONDAY_10_MARCH) == []


def test_limit_stops_early():
    book = diary(hours=WEEKDAYS_9_TO_5)
    assert len(free_slots(book, set(), [], MONDAY_10_MARCH, limit=3)) == 3
    assert free_slots(book, set(), [], MONDAY_10_MARCH, limit=0) == []
    with pytest.raises(LocalProtocolError):
        free_slots(book, set(), [], MONDAY_10_MARCH, limit=-1)


@pytest.mark.parametrize(
    "start",
    [
        datetime(2025, 3, 10, 9, 15, tzinfo=UTC),  # off the grid
        datetime(2025, 3, 10, 9, 0, 30, tzinfo=UTC),  # not on the minute
        datetime(2025, 3, 10, 8, 30, tzinfo=UTC),  # before opening
        datetime(2025, 3, 10, 16, 45, tzinfo=UTC),  # would end after closing
        datetime(2025, 3, 15, 10, 0, tzinfo=UTC),  # Saturday: closed
    ],
)
def test_a_start_that_is_not_a_slot_is_refused(start):
    book = diary(hours=WEEKDAYS_9_TO_5)
    assert check_slot(book, set(), [], start, MONDAY_10_MARCH) is SlotVerdict.NOT_A_SLOT


def test_naive_datetimes_are_refused():
    book = diary(hours=WEEKDAYS_9_TO_5)
    with pytest.raises(LocalProtocolError):
        free_slots(book, set(), [], datetime(2025, 3, 10))
    with pytest.raises(LocalProtocolError):
        check_slot(book, set(), [], datetime(2025, 3, 10, 9), MONDAY_10_MARCH)
    with pytest.raises(LocalProtocolError):
        free_slots(
            book, set(), [(datetime(2025, 3, 10, 9), datetime(2025, 3, 10, 10))], MONDAY_10_MARCH
        )
    with pytest.raises(LocalProtocolError):
        ends_at_for(book, datetime(2025, 3, 10, 9))


# --- clock changes -----------------------------------------------------------------------


def night_slots(zone, day, slot, opens, closes):
    weekday = day.weekday()
    book = diary(zone, slot=slot, horizon=2, hours=[(weekday, opens, closes)])
    now = datetime.combine(day - timedelta(days=1), time(12), tzinfo=UTC)
    return walls(free_slots(book, set(), [], now), zone), book, now


def test_london_spring_forward_skips_the_missing_hour_and_the_slot_across_it():
    # 30 March 2025: 01:00 GMT becomes 02:00 BST.
    found, _, _ = night_slots("Europe/London", date(2025, 3, 30), 30, 0, 240)
    # 00:30 ends at 01:00 GMT, the instant the clocks go forward: it is offered.
    assert found == [
        f"2025-03-30 {hhmm}" for hhmm in ("00:00", "00:30", "02:00", "02:30", "03:00", "03:30")
    ]


def test_london_fall_back_offers_the_repeated_hour_once():
    # 26 October 2025: 02:00 BST becomes 01:00 GMT; 01:00–02:00 happens twice.
    found, book, now = night_slots("Europe/London", date(2025, 10, 26), 30, 0, 180)
    assert found == [
        f"2025-10-26 {hhmm}" for hhmm in ("00:00", "00:30", "01:00", "01:30", "02:00", "02:30")
    ]
    first_one_am = datetime(2025, 10, 26, 0, 0, tzinfo=UTC)  # 01:00 BST
    second_one_am = datetime(2025, 10, 26, 1, 0, tzinfo=UTC)  # 01:00 GMT
    assert check_slot(book, set(), [], first_one_am, now) is SlotVerdict.OPEN
    assert check_slot(book, set(), [], second_one_am, now) is SlotVerdict.NOT_A_SLOT
    # 01:30 BST ends as the clocks go back; 01:30 GMT is its second pass.
    assert check_slot(book, set(), [], datetime(2025, 10, 26, 0, 30, tzinfo=UTC), now) is (
        SlotVerdict.OPEN
    )
    assert check_slot(book, set(), [], datetime(2025, 10, 26, 1, 30, tzinfo=UTC), now) is (
        SlotVerdict.NOT_A_SLOT
    )


def test_a_slot_with_a_clock_change_inside_it_is_not_offered():
    # 60-minute slots from 00:30: 01:30 BST would run until 01:30 GMT, two hours later.
    found, _, _ = night_slots("Europe/London", date(2025, 10, 26), 60, 30, 240)
    assert found == [f"2025-10-26 {hhmm}" for hhmm in ("00:30", "02:30")]
    # 00:30 GMT would run until 02:30 BST, half an hour later.
    found, _, _ = night_slots("Europe/London", date(2025, 3, 30), 60, 30, 270)
    assert found == [f"2025-03-30 {hhmm}" for hhmm in ("02:30", "03:30")]


def test_new_york_spring_forward_and_fall_back():
    found, _, _ = night_slots("America/New_York", date(2025, 3, 9), 60, 0, 300)
    assert found == [f"2025-03-09 {hhmm}" for hhmm in ("00:00", "01:00", "03:00", "04:00")]
    found, _, _ = night_slots("America/New_York", date(2025, 11, 2), 60, 0, 240)
    assert found == [f"2025-11-02 {hhmm}" for hhmm in ("00:00", "01:00", "02:00", "03:00")]


def test_lord_howe_half_hour_shift():
    # 5 October 2025: 02:00 (+10:30) becomes 02:30 (+11:00).
    found, _, _ = night_slots("Australia/Lord_Howe", date(2025, 10, 5), 15, 60, 210)
    assert found == [
        f"2025-10-05 {hhmm}"
        for hhmm in ("01:00", "01:15", "01:30", "01:45", "02:30", "02:45", "03:00", "03:15")
    ]
    # 6 April 2025: 02:00 (+11:00) becomes 01:30 (+10:30); 01:30–02:00 happens twice.
    found, book, now = night_slots("Australia/Lord_Howe", date(2025, 4, 6), 15, 60, 180)
    assert found == [
        f"2025-04-06 {hhmm}"
        for hhmm in ("01:00", "01:15", "01:30", "01:45", "02:00", "02:15", "02:30", "02:45")
    ]
    assert len(set(found)) == len(found)


def test_a_day_that_does_not_exist_offers_nothing():
    # Samoa skipped 30 December 2011 when it crossed the date line.
    found, _, _ = night_slots("Pacific/Apia", date(2011, 12, 30), 60, 0, 1440)
    assert not [wall for wall in found if wall.startswith("2011-12-30")]


def test_slots_are_spoken_at_their_local_time_after_a_change():
    found = free_slots(
        diary(slot=60, horizon=1, hours=[(6, 0, 240)]),
        set(),
        [],
        datetime(2025, 3, 29, 12, 0, tzinfo=UTC),
    )
    assert [speak_time(start, "Europe/London") for start, _ in found] == [
        "Sunday 30 March at midnight",
        "Sunday 30 March at 2 am",
        "Sunday 30 March at 3 am",
    ]


def test_a_long_horizon_is_computed_quickly_enough_to_offer_on_a_call():
    book = diary(slot=5, horizon=365, hours=[(day, 0, 1440) for day in range(7)])
    found = free_slots(book, set(), [], MONDAY_10_MARCH, limit=10)
    assert len(found) == 10
    assert len(free_slots(book, set(), [], MONDAY_10_MARCH)) > 100_000
