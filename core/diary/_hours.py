"""A diary's settings and opening hours, validated.

spec: telephony.md "Diary (per account)" — timezone (IANA, must resolve), slot_minutes,
lead_minutes, horizon_days, enabled, and hours: opening periods ``weekday`` (0 is
Monday), ``opens_minute``, ``closes_minute`` in minutes from local midnight.
"closes_minute above opens_minute and at most 1440; periods on one day may not
overlap; two periods on a day express a break; a day with none is closed."

A ``Diary`` is valid by construction: its ``__post_init__`` checks every field and
raises ``DiaryError`` naming the field, ``hours[3].closes_minute`` for a period. The
app turns a request body into one with ``parse_diary``.

Our rules where the spec gives none:

* ranges: ``slot_minutes`` 5 to 480, ``lead_minutes`` 0 to 10080 (a week),
  ``horizon_days`` 1 to 365;
* periods that touch (one closes at 720, the next opens at 720) are allowed and kept as
  written; for the slots they count as one period, so no break lies between them;
* a period ends at local midnight at the latest; opening across midnight is written as
  two periods on two days, and no slot runs across midnight.
"""

from __future__ import annotations

__all__ = [
    "HORIZON_DAYS_RANGE",
    "LEAD_MINUTES_RANGE",
    "MINUTES_PER_DAY",
    "SLOT_MINUTES_RANGE",
    "WEEKDAYS",
    "Diary",
    "DiaryError",
    "OpeningPeriod",
    "parse_diary",
]

from collections.abc import Mapping
from dataclasses import fields
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..records import frozen

MINUTES_PER_DAY = 1440
SLOT_MINUTES_RANGE = range(5, 480 + 1)
LEAD_MINUTES_RANGE = range(0, 7 * MINUTES_PER_DAY + 1)
HORIZON_DAYS_RANGE = range(1, 365 + 1)
_HOST_ZONE = "localtime"
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class DiaryError(ValueError):
    """A diary field breaks a rule. ``field`` names it (``hours[3].closes_minute``);
    ``message`` says what is wrong in words an owner understands."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def within(self, prefix: str) -> DiaryError:
        """The same error for a field nested under ``prefix``."""
        return DiaryError(f"{prefix}.{self.field}", self.message)


def _check_int(field: str, value: object, allowed: range) -> None:
    # JSON true is not a number of minutes, though Python counts bool as int.
    if not isinstance(value, int) or isinstance(value, bool):
        raise DiaryError(field, f"must be a whole number, not {value!r}")
    if value not in allowed:
        raise DiaryError(field, f"must be from {allowed.start} to {allowed.stop - 1}, not {value}")


def _clock(minute: int) -> str:
    return "{:02d}:{:02d}".format(*divmod(minute, 60))


@frozen
class OpeningPeriod:
    """One opening period: on ``weekday`` (0 is Monday) from ``opens_minute`` to
    ``closes_minute``, in minutes from local midnight."""

    weekday: int
    opens_minute: int
    closes_minute: int

    def __post_init__(self) -> None:
        _check_int("weekday", self.weekday, range(7))
        _check_int("opens_minute", self.opens_minute, range(MINUTES_PER_DAY))
        _check_int("closes_minute", self.closes_minute, range(1, MINUTES_PER_DAY + 1))
        if self.closes_minute <= self.opens_minute:
            raise DiaryError("closes_minute", "must be after opens_minute")

    @property
    def span(self) -> str:
        """The period as an owner writes it: ``09:00–17:00`` (midnight closing is 24:00)."""
        return f"{_clock(self.opens_minute)}–{_clock(self.closes_minute)}"

    def overlaps(self, other: OpeningPeriod) -> bool:
        """Whether the two share a minute; periods that only touch do not."""
        return (
            self.weekday == other.weekday
            and self.opens_minute < other.closes_minute
            and other.opens_minute < self.closes_minute
        )


@frozen
class Diary:
    """An account's diary. Read ``zone`` for the time zone; pass the diary to
    ``free_slots`` and ``check_slot``."""

    timezone: str
    slot_minutes: int
    lead_minutes: int
    horizon_days: int
    enabled: bool
    hours: tuple[OpeningPeriod, ...]

    def __post_init__(self) -> None:
        _check_zone(self.timezone)
        _check_int("slot_minutes", self.slot_minutes, SLOT_MINUTES_RANGE)
        _check_int("lead_minutes", self.lead_minutes, LEAD_MINUTES_RANGE)
        _check_int("horizon_days", self.horizon_days, HORIZON_DAYS_RANGE)
        if not isinstance(self.enabled, bool):
            raise DiaryError("enabled", f"must be true or false, not {self.enabled!r}")
        _check_hours(self.hours)

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


def _check_zone(timezone: object) -> None:
    if not isinstance(timezone, str) or not timezone:
        raise DiaryError(
            "timezone", f"must be an IANA time zone such as Europe/London, not {timezone!r}"
        )
    # "localtime" resolves on many hosts but names the host's own zone, not an IANA one.
    if timezone == _HOST_ZONE or not _resolves(timezone):
        raise DiaryError(
            "timezone", f"{timezone!r} is not a time zone the time-zone database knows"
        )


def _resolves(key: str) -> bool:
    try:
        ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # unknown, malformed, a folder
        return False
    return True


def _check_hours(hours: object) -> None:
    if not isinstance(hours, tuple):
        raise DiaryError("hours", "must be a list of opening periods")
    for index, period in enumerate(hours):
        if not isinstance(period, OpeningPeriod):
            raise DiaryError(f"hours[{index}]", "must be an opening period")
    # Sorted by day and opening, any overlap shows between neighbours.
    in_order = sorted(range(len(hours)), key=lambda i: (hours[i].weekday, hours[i].opens_minute))
    for before, after in zip(in_order, in_order[1:]):
        if hours[before].overlaps(hours[after]):
            # The error sits on the later-written period and names the other by its
            # times: the owner never sees the list's indexes.
            first, second = sorted((before, after))
            weekday = WEEKDAYS[hours[first].weekday]
            raise DiaryError(f"hours[{second}]", f"overlaps {hours[first].span} on {weekday}")


_DIARY_FIELDS = tuple(field.name for field in fields(Diary))
_PERIOD_FIELDS = tuple(field.name for field in fields(OpeningPeriod))


def parse_diary(body: Mapping[str, object], current: Diary | None = None) -> Diary:
    """Build a ``Diary`` from a request body (decoded JSON), or raise ``DiaryError``.

    A field absent from ``body`` keeps its value in ``current``; without ``current``
    every field is required. ``hours``, when present, replaces the periods wholesale
    (spec: "replaced wholesale on each write"). Unknown fields are refused, so a
    misspelt one is not silently ignored.
    """
    for key in body:
        if key not in _DIARY_FIELDS:
            raise DiaryError(str(key), "is not a diary field")
    values = {}
    for name in _DIARY_FIELDS:
        if name in body:
            values[name] = _parse_hours(body[name]) if name == "hours" else body[name]
        elif current is not None:
            values[name] = getattr(current, name)
        else:
            raise DiaryError(name, "is required")
    return Diary(**values)


def _parse_hours(raw: object) -> tuple[OpeningPeriod, ...]:
    if not isinstance(raw, (list, tuple)):
        raise DiaryError("hours", "must be a list of opening periods")
    return tuple(_parse_period(index, item) for index, item in enumerate(raw))


def _parse_period(index: int, item: object) -> OpeningPeriod:
    prefix = f"hours[{index}]"
    if not isinstance(item, Mapping):
        raise DiaryError(prefix, "must be an object with weekday, opens_minute and closes_minute")
    for key in item:
        if key not in _PERIOD_FIELDS:
            raise DiaryError(f"{prefix}.{key}", "is not a field of an opening period")
    for name in _PERIOD_FIELDS:
        if name not in item:
            raise DiaryError(f"{prefix}.{name}", "is required")
    try:
        return OpeningPeriod(**{name: item[name] for name in _PERIOD_FIELDS})
    except DiaryError as error:
        raise error.within(prefix) from None
