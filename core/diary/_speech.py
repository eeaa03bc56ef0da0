"""Appointments as a caller hears them and as the diary shows them.

spec: telephony.md "Diary (per account)" — "appointments are shown in the diary's own
zone everywhere", and each booking gets a generated reference that a caller later
quotes to change it.

* ``speak_time`` gives words for the agent to say: "Tuesday 3 March at 2:30 pm".
* ``show_in_zone`` gives the RFC 3339 text with the diary's offset, for the API.
* ``reference_from`` turns random bytes, drawn by the app, into a six-character
  reference; ``normalise_reference`` tidies what a caller read back.

The reference alphabet leaves out characters that look like another on a screen or on
paper — 0 O Q D, 1 I L, 2 Z, 5 S, 8 B, G (like 6), U V — and N, which sounds like M on
a telephone line: 19 characters, so six give about 47 million references.
"""

from __future__ import annotations

__all__ = [
    "REFERENCE_ALPHABET",
    "REFERENCE_BYTES",
    "REFERENCE_LENGTH",
    "normalise_reference",
    "reference_from",
    "show_in_zone",
    "speak_time",
]

from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo

from ..errors import LocalProtocolError
from ._hours import WEEKDAYS

REFERENCE_ALPHABET = "ACEFHJKMPRTWXY34679"
REFERENCE_LENGTH = 6
#: How many random bytes ``reference_from`` needs: 64 bits reduced to about 25.5 bits
#: leaves a bias far below anything a caller could use.
REFERENCE_BYTES = 8

_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip

# What a caller or a recogniser puts between characters when reading a reference.
_READING_SEPARATORS = str.maketrans("", "", " -./\t")


def _zone(zone: str | tzinfo) -> tzinfo:
    return ZoneInfo(zone) if isinstance(zone, str) else zone


def _require_aware(instant: datetime) -> None:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise LocalProtocolError(f"an appointment time must be aware, not {instant!r}")


def speak_time(starts_at: datetime, zone: str | tzinfo, now: datetime | None = None) -> str:
    """Words for an instant in the diary's zone: "Tuesday 3 March at 2:30 pm".

    Whole hours drop the minutes ("at 2 pm"); 12:00 is "midday" and 00:00 "midnight".
    Pass ``now`` to have the year said when it is not the current one.
    """
    _require_aware(starts_at)
    local = starts_at.astimezone(_zone(zone))
    day = f"{WEEKDAYS[local.weekday()]} {local.day} {_MONTHS[local.month - 1]}"
    if now is not None:
        _require_aware(now)
        if now.astimezone(local.tzinfo).year != local.year:
            day = f"{day} {local.year}"
    return f"{day} at {_clock(local.hour, local.minute)}"


def _clock(hour: int, minute: int) -> str:
    if minute == 0 and hour in (0, 12):
        return "midnight" if hour == 0 else "midday"
    suffix = "am" if hour < 12 else "pm"
    twelve = hour % 12 or 12
    if minute == 0:
        return f"{twelve} {suffix}"
    return f"{twelve}:{minute:02d} {suffix}"


def show_in_zone(instant: datetime, zone: str | tzinfo) -> str:
    """RFC 3339 text of ``instant`` with the zone's offset, to the second:
    ``2025-03-04T14:30:00+00:00``."""
    _require_aware(instant)
    return instant.astimezone(_zone(zone)).isoformat(timespec="seconds")


def reference_from(randomness: bytes) -> str:
    """A booking reference from at least ``REFERENCE_BYTES`` random bytes.

    The app draws them (``secrets.token_bytes(REFERENCE_BYTES)``) and draws again if
    the reference is already in use in the diary.
    """
    if len(randomness) < REFERENCE_BYTES:
        raise LocalProtocolError(
            f"a reference needs {REFERENCE_BYTES} random bytes, not {len(randomness)}"
        )
    base = len(REFERENCE_ALPHABET)
    value = int.from_bytes(randomness[:REFERENCE_BYTES], "big") % base**REFERENCE_LENGTH
    characters = []
    for _ in range(REFERENCE_LENGTH):
        value, index = divmod(value, base)
        characters.append(REFERENCE_ALPHABET[index])
    return "".join(characters)


def normalise_reference(text: str) -> str:
    """A reference as read back by a caller, in the form ``reference_from`` gives:
    upper case, without spaces, dashes, dots or slashes. It is not otherwise checked:
    a reference that matches no booking simply matches none."""
    return text.translate(_READING_SEPARATORS).upper()
