"""Properties of the free slots over many zones and clock changes: Europe/London,
America/New_York, Australia/Lord_Howe (a 30-minute shift), and any zone the database
holds, with ``now`` placed shortly before one of that zone's clock changes.

spec: telephony.md "Diary (per account)" — "a non-existent hour at a clock change is
never offered and a repeated hour is offered once". The slots are also compared with
an oracle that walks every minute of the window instead of every slot of the hours.
"""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, available_timezones

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.diary import Diary, OpeningPeriod, SlotVerdict, check_slot, free_slots

NAMED_ZONES = ("Europe/London", "America/New_York", "Australia/Lord_Howe")
ALL_ZONES = tuple(sorted(available_timezones() - {"localtime"}))
MINUTE = timedelta(minutes=1)


@functools.lru_cache(maxsize=None)
def clock_changes(zone_name: str, year: int) -> tuple[datetime, ...]:
    """The instants in ``year`` at which the zone's offset changes, to the minute."""
    zone = ZoneInfo(zone_name)
    changes = []
    step = timedelta(hours=6)
    instant = datetime(year, 1, 1, tzinfo=UTC)
    while instant.year == year:
        later = instant + step
        if instant.astimezone(zone).utcoffset() != later.astimezone(zone).utcoffset():
            low, high = instant, later  # the change lies in (low, high]
            while high - low > MINUTE:
                middle = low + (high - low) / 2
                middle = middle.replace(second=0, microsecond=0)
                if middle.astimezone(zone).utcoffset() == low.astimezone(zone).utcoffset():
                    low = middle
                else:
                    high = middle
            changes.append(high)
        instant = later
    return tuple(changes)


@st.composite
def zone_and_change(draw):
    """A zone and, mostly, one of its clock changes in a year from 2020 to 2032."""
    zone = draw(st.one_of(st.sampled_from(NAMED_ZONES), st.sampled_from(ALL_ZONES)))
    year = draw(st.integers(2020, 2032))
    changes = clock_changes(zone, year)
    if changes and draw(st.integers(0, 3)):
        return zone, year, draw(st.sampled_from(changes))
    return zone, year, None


@st.composite
def random_hours(draw):
    """Periods on random days: a day's boundaries cut it into segments, each open or
    not; open segments next to each other make periods that touch."""
    periods = []
    for weekday in draw(st.sets(st.integers(0, 6), min_size=1)):
        cuts = draw(st.sets(st.integers(0, 288).map(lambda five: five * 5), min_size=2, max_size=8))
        bounds = sorted(cuts)
        for opens, closes in zip(bounds, bounds[1:]):
            if draw(st.booleans()):
                periods.append(OpeningPeriod(weekday, opens, closes))
    return tuple(periods)


def _five(minute: int) -> int:
    return max(0, min(1440, minute - minute % 5))


@st.composite
def hours_around(draw, zone: ZoneInfo, change: datetime):
    """Opening hours covering the wall times just before and just after ``change``."""
    spans: dict[int, tuple[int, int]] = {}
    for wall in ((change - MINUTE).astimezone(zone), change.astimezone(zone)):
        minute = wall.hour * 60 + wall.minute
        opens = _five(minute - draw(st.integers(0, 300)))
        closes = max(opens + 5, _five(minute + draw(st.integers(5, 300)) + 4))
        low, high = spans.get(wall.weekday(), (opens, closes))
        spans[wall.weekday()] = (min(low, opens), min(1440, max(high, closes)))
    return tuple(OpeningPeriod(day, opens, closes) for day, (opens, closes) in spans.items())


@st.composite
def cases(draw):
    zone_name, year, change = draw(zone_and_change())
    zone = ZoneInfo(zone_name)
    lead = draw(st.integers(0, 600))
    seconds = draw(st.integers(0, 59))
    if change is None:
        now = datetime(year, 1, 1, second=seconds, tzinfo=UTC)
        now += timedelta(minutes=draw(st.integers(0, 360 * 24 * 60)))
        hours, horizon = draw(random_hours()), draw(st.integers(1, 4))
    else:
        # The change falls after the lead and inside the horizon, with hours around it.
        before = timedelta(minutes=lead + draw(st.integers(0, 2 * 24 * 60)), seconds=seconds)
        now = change - before
        hours = draw(hours_around(zone, change))
        horizon = draw(st.integers(-(-(before + timedelta(hours=6)) // timedelta(days=1)), 4))
    diary = Diary(
        timezone=zone_name,
        slot_minutes=draw(st.one_of(st.sampled_from([5, 15, 20, 30, 60, 90]), st.integers(5, 480))),
        lead_minutes=lead,
        horizon_days=horizon,
        enabled=True,
        hours=hours,
    )
    local_today = now.astimezone(zone).date()
    closures = {
        local_today + timedelta(days=k) for k in draw(st.sets(st.integers(-1, 5), max_size=2))
    }
    booked = [
        (now + timedelta(minutes=start), now + timedelta(minutes=start + length))
        for start, length in draw(
            st.lists(st.tuples(st.integers(-60, 6000), st.integers(1, 240)), max_size=4)
        )
    ]
    return diary, closures, booked, now


def open_runs(diary: Diary, weekday: int) -> list[tuple[int, int]]:
    """The day's open minutes as maximal runs, found minute by minute."""
    minutes = {
        minute
        for period in diary.hours
        if period.weekday == weekday
        for minute in range(period.opens_minute, period.closes_minute)
    }
    runs = []
    for minute in sorted(minutes):
        if runs and runs[-1][1] == minute:
            runs[-1] = (runs[-1][0], minute + 1)
        else:
            runs.append((minute, minute + 1))
    return runs


def oracle(diary: Diary, closures: set[date], booked, now: datetime) -> list[tuple]:
    """Every whole minute of the window that is a bookable slot start."""
    zone, length = diary.zone, timedelta(minutes=diary.slot_minutes)
    earliest = now + timedelta(minutes=diary.lead_minutes)
    latest = now + timedelta(days=diary.horizon_days)
    runs = {weekday: open_runs(diary, weekday) for weekday in range(7)}
    changes = [
        change
        for year in range(earliest.year - 1, latest.year + 2)
        for change in clock_changes(diary.timezone, year)
    ]
    instant = earliest.replace(second=0, microsecond=0)
    if instant < earliest:
        instant += MINUTE
    found = []
    while instant < latest:
        slot = (instant, instant + length)
        if is_slot_start(diary, zone, slot, runs, changes, closures, booked):
            found.append(slot)
        instant += MINUTE
    return found


def is_slot_start(diary, zone, slot, runs, changes, closures, booked) -> bool:
    start, end = slot
    wall = start.astimezone(zone).replace(tzinfo=None)
    if wall.date() in closures:
        return False
    if wall.replace(tzinfo=zone, fold=0).astimezone(UTC) != start:
        return False  # the second pass of a repeated wall time
    minute = wall.hour * 60 + wall.minute
    on_grid = any(
        opens <= minute and minute + diary.slot_minutes <= closes
        and (minute - opens) % diary.slot_minutes == 0
        for opens, closes in runs[wall.weekday()]
    )  # fmt: skip
    if not on_grid or any(start < change < end for change in changes):
        return False  # off the grid, or a clock change inside the slot
    return not any(b_start < end and start < b_end for b_start, b_end in booked)


PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(cases())
def test_offered_slots_keep_every_rule(case):
    diary, closures, booked, now = case
    zone, length = diary.zone, timedelta(minutes=diary.slot_minutes)
    slots = free_slots(diary, closures, booked, now)
    walls = []
    for start, end in slots:
        local = start.astimezone(zone)
        wall = local.replace(tzinfo=None)
        walls.append(wall)
        # Never a non-existent wall time, and a repeated one only at its first pass.
        assert wall.replace(tzinfo=zone).astimezone(UTC) == start
        # Inside an opening period in local time, lasting slot_minutes on the wall too.
        assert end - start == length
        assert (end - MINUTE).astimezone(zone).utcoffset() == local.utcoffset()
        minute = wall.hour * 60 + wall.minute
        assert any(
            a <= minute and minute + diary.slot_minutes <= b
            for a, b in open_runs(diary, wall.weekday())
        )
        # Lead, horizon, closures, bookings.
        assert (
            now + timedelta(minutes=diary.lead_minutes)
            <= start
            < now + timedelta(days=diary.horizon_days)
        )
        assert wall.date() not in closures
        assert not any(b_start < end and start < b_end for b_start, b_end in booked)
    assert len(set(walls)) == len(walls), "a wall time offered twice"
    for (_, end), (next_start, _) in zip(slots, slots[1:]):
        assert end <= next_start, "slots out of order or overlapping"


@PROPERTY_SETTINGS
@given(cases())
def test_the_slots_are_exactly_the_minutes_the_oracle_finds(case):
    diary, closures, booked, now = case
    expected = oracle(diary, closures, booked, now)
    assert free_slots(diary, closures, booked, now) == expected
    for start, _ in expected:
        assert check_slot(diary, closures, booked, start, now) is SlotVerdict.OPEN


@PROPERTY_SETTINGS
@given(cases(), st.data())
def test_check_slot_refuses_every_start_that_is_not_offered(case, data):
    diary, closures, booked, now = case
    offered = {start for start, _ in free_slots(diary, closures, booked, now)}
    window = diary.horizon_days * 24 * 60 + diary.lead_minutes
    for _ in range(20):
        start = now.replace(second=0, microsecond=0) + MINUTE * data.draw(st.integers(-60, window))
        verdict = check_slot(diary, closures, booked, start, now)
        assert (verdict is SlotVerdict.OPEN) == (start in offered)


@PROPERTY_SETTINGS
@given(cases(), st.integers(0, 20))
def test_a_limit_gives_the_first_slots(case, limit):
    diary, closures, booked, now = case
    assert (
        free_slots(diary, closures, booked, now, limit)
        == free_slots(diary, closures, booked, now)[:limit]
    )
