"""The diary's settings and opening hours, and how appointments are spoken, shown and
referenced (spec: telephony.md "Diary (per account)")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.diary import (
    REFERENCE_ALPHABET,
    REFERENCE_BYTES,
    REFERENCE_LENGTH,
    Diary,
    DiaryError,
    OpeningPeriod,
    normalise_reference,
    parse_diary,
    reference_from,
    show_in_zone,
    speak_time,
)
from core.errors import LocalProtocolError


def body(**changes):
    fields = {
        "timezone": "Europe/London",
        "slot_minutes": 30,
        "lead_minutes": 60,
        "horizon_days": 28,
        "enabled": True,
        "hours": [
            {"weekday": 0, "opens_minute": 540, "closes_minute": 780},
            {"weekday": 0, "opens_minute": 840, "closes_minute": 1020},
            {"weekday": 2, "opens_minute": 540, "closes_minute": 1020},
        ],
    }
    fields.update(changes)
    return fields


def test_a_valid_body_gives_a_diary():
    diary = parse_diary(body())
    assert diary.timezone == "Europe/London"
    assert diary.zone == ZoneInfo("Europe/London")
    assert (diary.slot_minutes, diary.lead_minutes, diary.horizon_days) == (30, 60, 28)
    assert diary.enabled is True
    assert diary.hours == (
        OpeningPeriod(0, 540, 780),
        OpeningPeriod(0, 840, 1020),
        OpeningPeriod(2, 540, 1020),
    )


def test_no_hours_means_every_day_is_closed_and_is_valid():
    assert parse_diary(body(hours=[])).hours == ()


def error_of(fields, current=None):
    with pytest.raises(DiaryError) as caught:
        parse_diary(fields, current)
    error = caught.value
    assert str(error) == f"{error.field}: {error.message}"
    return error.field, error.message


@pytest.mark.parametrize("zone", ["Mars/Olympus", "europe/london", "localtime", "", "Europe", 5])
def test_a_time_zone_must_resolve(zone):
    field, message = error_of(body(timezone=zone))
    assert field == "timezone"
    assert "time zone" in message


@pytest.mark.parametrize(
    "zone", ["../etc/passwd", "/etc/localtime", "Europe/London\x00", "x" * 5000]
)
def test_a_time_zone_that_is_a_path_is_refused_cleanly(zone):
    assert error_of(body(timezone=zone))[0] == "timezone"


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("slot_minutes", 4),
        ("slot_minutes", 481),
        ("slot_minutes", 30.0),
        ("slot_minutes", True),
        ("slot_minutes", "30"),
        ("lead_minutes", -1),
        ("lead_minutes", 10081),
        ("horizon_days", 0),
        ("horizon_days", 366),
        ("horizon_days", None),
        ("enabled", "yes"),
        ("enabled", 1),
    ],
)
def test_numbers_and_switches_are_checked(field, bad):
    assert error_of(body(**{field: bad}))[0] == field


@pytest.mark.parametrize(
    ("field", "good"),
    [
        ("slot_minutes", 5),
        ("slot_minutes", 480),
        ("lead_minutes", 0),
        ("lead_minutes", 10080),
        ("horizon_days", 1),
        ("horizon_days", 365),
        ("enabled", False),
    ],
)
def test_the_ends_of_each_range_are_accepted(field, good):
    assert getattr(parse_diary(body(**{field: good})), field) == good


def period(weekday=1, opens=540, closes=1020):
    return {"weekday": weekday, "opens_minute": opens, "closes_minute": closes}


@pytest.mark.parametrize(
    ("bad_period", "field"),
    [
        (period(weekday=7), "hours[3].weekday"),
        (period(weekday=-1), "hours[3].weekday"),
        (period(weekday=True), "hours[3].weekday"),
        (period(opens=-1), "hours[3].opens_minute"),
        (period(opens=1440, closes=1440), "hours[3].opens_minute"),
        (period(closes=1441), "hours[3].closes_minute"),
        (period(opens=600, closes=600), "hours[3].closes_minute"),
        (period(opens=600, closes=599), "hours[3].closes_minute"),
        ({"weekday": 1, "opens_minute": 540}, "hours[3].closes_minute"),
        ({**period(), "note": "x"}, "hours[3].note"),
        ("Tuesday 9 to 5", "hours[3]"),
    ],
)
def test_an_opening_period_error_names_its_index_and_field(bad_period, field):
    fields = body()
    fields["hours"] = [*fields["hours"], bad_period]
    assert error_of(fields)[0] == field


def test_a_closing_minute_above_the_opening_is_required():
    message = error_of(body(hours=[period(opens=600, closes=600)]))[1]
    assert "after opens_minute" in message


@pytest.mark.parametrize(
    ("second", "overlaps"),
    [
        (period(0, 700, 900), True),  # straddles the break
        (period(0, 500, 600), True),  # starts before the first period
        (period(0, 540, 780), True),  # the same period twice
        (period(0, 600, 700), True),  # inside the first period
        (period(0, 0, 1440), True),  # the whole day
        (period(0, 780, 840), False),  # exactly the break: touches both
        (period(0, 1020, 1440), False),  # touches the end
        (period(1, 540, 780), False),  # another day
    ],
)
def test_periods_on_one_day_may_touch_but_not_overlap(second, overlaps):
    fields = body()
    fields["hours"] = [*fields["hours"], second]
    if overlaps:
        field, message = error_of(fields)
        assert field == "hours[3]"
        assert message == "overlaps 09:00–13:00 on Monday"
    else:
        assert len(parse_diary(fields).hours) == 4


def test_an_overlap_names_the_later_of_the_two_periods():
    fields = body(hours=[period(3, 600, 700), period(2, 0, 60), period(3, 500, 650)])
    assert error_of(fields) == ("hours[2]", "overlaps 10:00–11:40 on Thursday")


def test_an_overlap_is_told_in_the_owners_times_not_the_lists_indexes():
    monday = body(hours=[period(0, 540, 1020), period(0, 840, 1020)])
    assert error_of(monday) == ("hours[1]", "overlaps 09:00–17:00 on Monday")
    till_midnight = body(hours=[period(6, 1200, 1440), period(6, 1380, 1440)])
    assert error_of(till_midnight)[1] == "overlaps 20:00–24:00 on Sunday"


def test_hours_must_be_a_list():
    assert error_of(body(hours="9-5"))[0] == "hours"


def test_unknown_and_missing_fields_are_named():
    assert error_of({**body(), "colour": "blue"})[0] == "colour"
    fields = body()
    del fields["slot_minutes"]
    assert error_of(fields) == ("slot_minutes", "is required")


def test_absent_fields_keep_the_current_values_and_hours_are_replaced_wholesale():
    current = parse_diary(body())
    assert parse_diary({"slot_minutes": 15}, current) == Diary(
        "Europe/London", 15, 60, 28, True, current.hours
    )
    replaced = parse_diary({"hours": [period(4, 600, 660)]}, current)
    assert replaced.hours == (OpeningPeriod(4, 600, 660),)


def test_a_diary_built_directly_is_checked_too():
    with pytest.raises(DiaryError):
        Diary("Nowhere/Land", 30, 0, 7, True, ())
    with pytest.raises(DiaryError) as caught:
        Diary("UTC", 30, 0, 7, True, (OpeningPeriod(0, 0, 60), OpeningPeriod(0, 30, 90)))
    assert caught.value.field == "hours[1]"
    with pytest.raises(DiaryError):
        Diary("UTC", 30, 0, 7, True, [OpeningPeriod(0, 0, 60)])  # a list, not a tuple


LONDON = ZoneInfo("Europe/London")


@pytest.mark.parametrize(
    ("instant", "spoken"),
    [
        (datetime(2026, 3, 3, 14, 30, tzinfo=UTC), "Tuesday 3 March at 2:30 pm"),
        (datetime(2026, 3, 3, 14, 0, tzinfo=UTC), "Tuesday 3 March at 2 pm"),
        (datetime(2026, 3, 3, 9, 5, tzinfo=UTC), "Tuesday 3 March at 9:05 am"),
        (datetime(2026, 3, 3, 12, 0, tzinfo=UTC), "Tuesday 3 March at midday"),
        (datetime(2026, 3, 3, 12, 45, tzinfo=UTC), "Tuesday 3 March at 12:45 pm"),
        (datetime(2026, 3, 3, 0, 0, tzinfo=UTC), "Tuesday 3 March at midnight"),
        (datetime(2026, 3, 3, 0, 15, tzinfo=UTC), "Tuesday 3 March at 12:15 am"),
        # British summer time: 13:30 UTC is 2:30 pm in London.
        (datetime(2026, 7, 14, 13, 30, tzinfo=UTC), "Tuesday 14 July at 2:30 pm"),
    ],
)
def test_times_are_spoken_in_the_diary_zone(instant, spoken):
    assert speak_time(instant, LONDON) == spoken
    assert speak_time(instant, "Europe/London") == spoken


def test_the_same_instant_is_spoken_in_each_diary_own_zone():
    instant = datetime(2026, 3, 3, 23, 30, tzinfo=UTC)
    assert speak_time(instant, "Australia/Sydney") == "Wednesday 4 March at 10:30 am"
    assert speak_time(instant, "America/New_York") == "Tuesday 3 March at 6:30 pm"


def test_the_year_is_said_only_when_it_is_not_this_year():
    instant = datetime(2027, 1, 5, 10, 0, tzinfo=UTC)
    assert speak_time(instant, LONDON, now=datetime(2026, 12, 20, tzinfo=UTC)) == (
        "Tuesday 5 January 2027 at 10 am"
    )
    assert speak_time(instant, LONDON, now=datetime(2027, 1, 1, tzinfo=UTC)) == (
        "Tuesday 5 January at 10 am"
    )


def test_times_are_shown_with_the_zone_offset():
    instant = datetime(2026, 7, 14, 13, 30, 12, 500, tzinfo=UTC)
    assert show_in_zone(instant, "Europe/London") == "2026-07-14T14:30:12+01:00"
    assert show_in_zone(instant, "Australia/Lord_Howe") == "2026-07-15T00:00:12+10:30"


def test_naive_times_are_refused():
    with pytest.raises(LocalProtocolError):
        speak_time(datetime(2026, 3, 3, 14, 30), LONDON)
    with pytest.raises(LocalProtocolError):
        show_in_zone(datetime(2026, 3, 3, 14, 30), LONDON)


def test_a_fixed_offset_zone_is_accepted_for_speaking():
    instant = datetime(2026, 3, 3, 14, 30, tzinfo=UTC)
    assert speak_time(instant, timezone(timedelta(hours=-5))) == "Tuesday 3 March at 9:30 am"


def test_a_reference_is_six_characters_of_the_alphabet():
    reference = reference_from(bytes(range(REFERENCE_BYTES)))
    assert len(reference) == REFERENCE_LENGTH == 6
    assert set(reference) <= set(REFERENCE_ALPHABET)
    assert reference == reference_from(bytes(range(REFERENCE_BYTES)))


def test_the_alphabet_has_no_look_alikes():
    assert not set("0OQD1IL2Z5S8BGUVN") & set(REFERENCE_ALPHABET)
    assert len(set(REFERENCE_ALPHABET)) == len(REFERENCE_ALPHABET) == 19


def test_a_reference_needs_enough_randomness():
    with pytest.raises(LocalProtocolError):
        reference_from(b"\x00" * (REFERENCE_BYTES - 1))


@given(st.binary(min_size=REFERENCE_BYTES, max_size=32))
def test_any_randomness_gives_a_readable_reference(randomness):
    reference = reference_from(randomness)
    assert len(reference) == REFERENCE_LENGTH
    assert set(reference) <= set(REFERENCE_ALPHABET)
    assert normalise_reference(reference) == reference


def test_different_randomness_spreads_over_the_alphabet():
    references = {reference_from(index.to_bytes(8, "big")) for index in range(0, 2**20, 997)}
    assert len(references) > 1000


@pytest.mark.parametrize("spoken", ["hef kcf", "HEF-KCF", "h.e.f.k.c.f", " Hefkcf\t"])
def test_a_reference_read_back_is_tidied(spoken):
    assert normalise_reference(spoken) == "HEFKCF"
