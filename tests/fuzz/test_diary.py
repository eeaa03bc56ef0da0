"""Fuzzing the booking rules: any decoded JSON body gives a ``Diary`` or a
``DiaryError`` naming the field; any aware start, however far from now, gets a
verdict; any text read back as a reference is tidied."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from core.diary import (
    Diary,
    DiaryError,
    OpeningPeriod,
    SlotVerdict,
    check_slot,
    free_slots,
    normalise_reference,
    parse_diary,
)
from tests.fuzz.strategies import json_values, objects_with
from tests.fuzz.verdicts import read_or_refusal

periods = objects_with({"weekday": st.integers(-1, 7), "opens_minute": st.integers(-1, 1441),
                        "closes_minute": st.integers(-1, 1441)})
diary_bodies = st.one_of(
    st.dictionaries(st.text(max_size=10), json_values, max_size=4),
    objects_with({
        "timezone": st.sampled_from(["Europe/London", "UTC", "Pacific/Kiritimati",
                                     "America/St_Johns", "localtime", "../etc", "Nowhere/x",
                                     "", "Europe/", "\x00"]),
        "slot_minutes": st.integers(0, 500),
        "lead_minutes": st.integers(-1, 20000),
        "horizon_days": st.integers(0, 400),
        "enabled": st.booleans(),
        "hours": st.lists(periods, max_size=4),
    }),
)


@settings(max_examples=300)
@given(diary_bodies)
def test_any_body_is_a_diary_or_a_diary_error(body):
    diary = read_or_refusal(parse_diary, body, DiaryError)
    if isinstance(diary, DiaryError):
        assert isinstance(diary.field, str) and diary.message
    else:
        assert isinstance(diary, Diary)


ZONES = ["UTC", "Europe/London", "Pacific/Kiritimati", "Pacific/Pago_Pago",
         "America/St_Johns", "Australia/Lord_Howe"]
diaries = st.builds(
    lambda zone, slot, lead, horizon, days: Diary(
        timezone=zone, slot_minutes=slot, lead_minutes=lead, horizon_days=horizon,
        enabled=True,
        hours=tuple(OpeningPeriod(day, 0, 1440) for day in sorted(days))),
    st.sampled_from(ZONES), st.integers(5, 480), st.integers(0, 10080), st.integers(1, 365),
    st.sets(st.integers(0, 6), max_size=7),
)
offsets = st.integers(-23 * 60, 23 * 60).map(lambda m: timezone(timedelta(minutes=m)))
# Any instant a request can name, the ends of the calendar included.
any_start = st.datetimes(timezones=st.one_of(st.just(UTC), offsets)).filter(
    lambda instant: instant.utcoffset() is not None)
now_ish = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1),
                       timezones=st.just(UTC))


@settings(max_examples=300)
@given(diaries, any_start, now_ish)
def test_any_start_gets_a_verdict(diary, starts_at, now):
    try:
        verdict = check_slot(diary, set(), [], starts_at, now)
    except OverflowError:
        raise AssertionError(f"{starts_at!r} overflowed") from None
    assert isinstance(verdict, SlotVerdict)


@settings(max_examples=100)
@given(diaries, st.lists(st.tuples(any_start, any_start), max_size=3), now_ish)
def test_bookings_anywhere_in_the_calendar_leave_free_slots_computable(diary, booked, now):
    assert isinstance(free_slots(diary, set(), booked, now, limit=5), list)


def test_a_start_at_the_end_of_the_calendar_is_not_a_slot():
    # Found by the fuzzer: converting 9999-12-31 23:00 UTC into a zone east of UTC
    # overflowed the calendar.
    diary = Diary(timezone="Pacific/Kiritimati", slot_minutes=30, lead_minutes=0,
                  horizon_days=365, enabled=True,
                  hours=tuple(OpeningPeriod(day, 0, 1440) for day in range(7)))
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for start in (datetime(9999, 12, 31, 23, tzinfo=UTC), datetime.max.replace(tzinfo=UTC),
                  datetime.min.replace(tzinfo=UTC)):
        assert check_slot(diary, set(), [], start, now) is SlotVerdict.NOT_A_SLOT


@given(st.text())
def test_any_text_read_back_is_a_reference_or_nothing(text):
    tidied = normalise_reference(text)
    assert normalise_reference(tidied) == tidied
