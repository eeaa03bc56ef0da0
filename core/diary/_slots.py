"""Which appointment slots a diary offers, and whether a requested start is one.

spec: telephony.md "Diary (per account)" — "local hours are converted with the
time-zone database, so a non-existent hour at a clock change is never offered and a
repeated hour is offered once"; "two callers cannot take one slot".

How slots are laid out (our rules where the spec gives none):

* Slot starts are local wall times: from each opening period's ``opens_minute`` in
  steps of ``slot_minutes``, as long as the slot ends by ``closes_minute``. Periods
  that touch count as one period, so the steps run on across the join.
* A wall time that does not exist (the hour skipped when clocks go forward) is not
  offered: it is found by converting to UTC and back and seeing a different wall time.
* A wall time that occurs twice (the hour repeated when clocks go back) is offered at
  its first occurrence (``fold=0``) only.
* A slot with a clock change inside it (after its start, before its end) is not
  offered: its real length would differ from its length on the wall clock. A slot may
  end at the very instant the clocks change. So every offered slot lasts exactly
  ``slot_minutes``, on the wall clock too, and lies inside an opening period.
* Lead and horizon: a slot is offered when ``now + lead_minutes <= start`` and
  ``start < now + horizon_days``. Closures are local dates; a booked appointment
  removes every slot it overlaps by any amount.

All instants are aware datetimes; slots are returned in UTC, oldest first.
"""

from __future__ import annotations

__all__ = [
    "Slot",
    "SlotVerdict",
    "check_slot",
    "ends_at_for",
    "free_slots",
    "slot_is_bookable",
]

import bisect
import enum
from collections.abc import Collection, Iterable, Iterator
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from ..errors import LocalProtocolError
from ._hours import Diary

#: ``(starts_at, ends_at)``, both aware and in UTC.
Slot = tuple[datetime, datetime]

_ONE_DAY = timedelta(days=1)
_TICK = timedelta(microseconds=1)


class SlotVerdict(enum.Enum):
    """Whether a requested start can be booked, and if not, why."""

    #: A slot of the diary, open and free: book it.
    OPEN = "open"
    #: The diary is switched off: the line does not offer times.
    DIARY_OFF = "diary_off"
    #: Not the start of a slot: outside opening hours, off the slot grid, in an hour
    #: skipped at a clock change, the second pass of a repeated hour, or a slot that
    #: a clock change falls inside.
    NOT_A_SLOT = "not_a_slot"
    #: The day is a closure.
    CLOSED_DAY = "closed_day"
    #: Sooner than ``lead_minutes`` from now (or already past).
    TOO_SOON = "too_soon"
    #: At or beyond ``horizon_days`` from now.
    TOO_FAR = "too_far"
    #: Another appointment overlaps it: the caller is told the time has gone.
    TAKEN = "taken"


def _require_aware(**instants: datetime) -> None:
    for name, instant in instants.items():
        if instant.tzinfo is None or instant.utcoffset() is None:
            raise LocalProtocolError(f"{name} must be an aware datetime, not {instant!r}")


def _merged_periods(diary: Diary) -> dict[int, tuple[tuple[int, int], ...]]:
    """Opening periods by weekday as ``(opens, closes)`` minutes, sorted, with periods
    that touch joined into one."""
    by_day: dict[int, list[tuple[int, int]]] = {}
    for period in sorted(diary.hours, key=lambda p: (p.weekday, p.opens_minute)):
        day = by_day.setdefault(period.weekday, [])
        if day and day[-1][1] == period.opens_minute:
            day[-1] = (day[-1][0], period.closes_minute)
        else:
            day.append((period.opens_minute, period.closes_minute))
    return {weekday: tuple(periods) for weekday, periods in by_day.items()}


def _slot_at(zone: tzinfo, day: date, minute: int, slot_minutes: int) -> Slot | None:
    """The slot starting at ``minute`` past local midnight of ``day``, or ``None`` when
    that wall time does not exist or a clock change falls inside the slot."""
    wall = datetime.combine(day, time(minute // 60, minute % 60))
    starts_at = wall.replace(tzinfo=zone).astimezone(UTC)  # fold=0: first occurrence
    if starts_at.astimezone(zone).replace(tzinfo=None) != wall:
        return None  # skipped when the clocks went forward
    ends_at = starts_at + timedelta(minutes=slot_minutes)
    # The offset in force at the start must hold until the slot's last moment.
    if (ends_at - _TICK).astimezone(zone).utcoffset() != starts_at.astimezone(zone).utcoffset():
        return None  # a clock change falls inside the slot
    return starts_at, ends_at


def _day_slots(
    zone: tzinfo, day: date, periods: Iterable[tuple[int, int]], slot_minutes: int
) -> Iterator[Slot]:
    for opens, closes in periods:
        for minute in range(opens, closes - slot_minutes + 1, slot_minutes):
            slot = _slot_at(zone, day, minute, slot_minutes)
            if slot is not None:
                yield slot


class _Booked:
    """Booked appointments merged into sorted, disjoint intervals for overlap tests."""

    def __init__(self, booked: Iterable[tuple[datetime, datetime]]) -> None:
        intervals = list(booked)
        for starts_at, ends_at in intervals:
            _require_aware(starts_at=starts_at, ends_at=ends_at)
        self._starts: list[datetime] = []
        self._ends: list[datetime] = []
        for starts_at, ends_at in sorted(intervals):
            if self._ends and starts_at <= self._ends[-1]:
                self._ends[-1] = max(self._ends[-1], ends_at)
            else:
                self._starts.append(starts_at)
                self._ends.append(ends_at)

    def overlaps(self, slot: Slot) -> bool:
        # The first interval ending after the slot starts is the only candidate.
        index = bisect.bisect_right(self._ends, slot[0])
        return index < len(self._starts) and self._starts[index] < slot[1]


def free_slots(
    diary: Diary,
    closures: Collection[date],
    booked: Iterable[tuple[datetime, datetime]],
    now: datetime,
    limit: int | None = None,
) -> list[Slot]:
    """The slots a caller may book, oldest first, at most ``limit`` of them.

    ``closures`` are local dates of the diary's zone; ``booked`` holds the
    ``(starts_at, ends_at)`` of live appointments (booked or moved). Say a slot with
    ``speak_time``; book it after ``check_slot`` in the booking transaction.
    """
    _require_aware(now=now)
    if limit is not None and limit < 0:
        raise LocalProtocolError(f"limit must not be negative, not {limit}")
    if not diary.enabled or limit == 0:
        return []
    zone, periods, taken = diary.zone, _merged_periods(diary), _Booked(booked)
    earliest = now + timedelta(minutes=diary.lead_minutes)
    latest = now + timedelta(days=diary.horizon_days)
    found: list[Slot] = []
    for day in _local_days(earliest, latest, zone):
        if day in closures:
            continue
        for slot in _day_slots(zone, day, periods.get(day.weekday(), ()), diary.slot_minutes):
            if earliest <= slot[0] < latest and not taken.overlaps(slot):
                found.append(slot)
                if len(found) == limit:
                    return found
    return found


def _local_days(earliest: datetime, latest: datetime, zone: tzinfo) -> Iterator[date]:
    # One day of margin either side: a repeated hour at midnight can put an instant on
    # the local date before the one its neighbours suggest.
    day = earliest.astimezone(zone).date() - _ONE_DAY
    last = latest.astimezone(zone).date() + _ONE_DAY
    while day <= last:
        yield day
        day += _ONE_DAY


def check_slot(
    diary: Diary,
    closures: Collection[date],
    booked: Iterable[tuple[datetime, datetime]],
    starts_at: datetime,
    now: datetime,
) -> SlotVerdict:
    """Decide a booking request: ``OPEN`` exactly for the starts ``free_slots`` would
    offer, otherwise the first reason it cannot be booked.

    Call it inside the transaction that stores the appointment, with ``booked`` read
    in that transaction, so that two callers cannot take one slot.
    """
    _require_aware(starts_at=starts_at, now=now)
    if not diary.enabled:
        return SlotVerdict.DIARY_OFF
    zone = diary.zone
    try:
        local = starts_at.astimezone(zone)
        slot = _grid_slot(diary, zone, local)
    except OverflowError:
        # An instant at the very edge of the calendar (year 1 or 9999) has no wall
        # time in some zones, and no slot either: a request may name any instant.
        return SlotVerdict.NOT_A_SLOT
    if slot is None or slot[0] != starts_at:
        # A different instant for the same wall time: the repeated hour's second pass.
        return SlotVerdict.NOT_A_SLOT
    if local.date() in closures:
        return SlotVerdict.CLOSED_DAY
    if starts_at < now + timedelta(minutes=diary.lead_minutes):
        return SlotVerdict.TOO_SOON
    if starts_at >= now + timedelta(days=diary.horizon_days):
        return SlotVerdict.TOO_FAR
    if _Booked(booked).overlaps(slot):
        return SlotVerdict.TAKEN
    return SlotVerdict.OPEN


def _grid_slot(diary: Diary, zone: tzinfo, local: datetime) -> Slot | None:
    """The slot whose start has ``local``'s wall time, if that wall time is on the
    slot grid of an opening period of its day."""
    if local.second or local.microsecond:
        return None
    minute = local.hour * 60 + local.minute
    length = diary.slot_minutes
    for opens, closes in _merged_periods(diary).get(local.weekday(), ()):
        if opens <= minute and minute + length <= closes and (minute - opens) % length == 0:
            return _slot_at(zone, local.date(), minute, length)
    return None


def slot_is_bookable(
    diary: Diary,
    closures: Collection[date],
    booked: Iterable[tuple[datetime, datetime]],
    starts_at: datetime,
    now: datetime,
) -> bool:
    """Whether ``check_slot`` says ``OPEN``."""
    return check_slot(diary, closures, booked, starts_at, now) is SlotVerdict.OPEN


def ends_at_for(diary: Diary, starts_at: datetime) -> datetime:
    """An appointment's end, in UTC: ``slot_minutes`` after its start. No offered slot
    has a clock change inside it, so this is also its end on the wall clock."""
    _require_aware(starts_at=starts_at)
    return starts_at.astimezone(UTC) + timedelta(minutes=diary.slot_minutes)
