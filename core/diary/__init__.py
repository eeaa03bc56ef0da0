"""The per-account diary: opening hours, free slots, appointments and references.

spec: telephony.md "Diary (per account)", "Appointment", "Limits". Pure: the app
passes ``now``, the stored closures and appointments, and random bytes for references.

What to call, in order:

1. ``parse_diary`` — a request body to a valid ``Diary`` (or ``DiaryError`` naming the
   field, ``hours[3].closes_minute``).
2. ``free_slots`` — the slots to offer; ``speak_time`` to say one.
3. ``check_slot`` — inside the booking transaction; ``ends_at_for`` and
   ``reference_from`` complete the appointment; ``transition`` gives its state and the
   notification to emit.
4. ``ChangeGate.attempt`` — a change on a call, three refused attempts at most.

The modules behind it: ``_hours`` (settings and opening periods), ``_slots`` (the slot
grid across clock changes), ``_speech`` (words and references), ``_appointments``
(the state machine and the change-by-telephone rule).
"""

from ._appointments import (
    LIVE_STATES,
    MAX_CHANGE_ATTEMPTS,
    TRANSITIONS,
    Appointment,
    AppointmentEffect,
    AppointmentInput,
    AppointmentState,
    ChangeDecision,
    ChangeGate,
    may_change,
    transition,
)
from ._hours import (
    HORIZON_DAYS_RANGE,
    LEAD_MINUTES_RANGE,
    SLOT_MINUTES_RANGE,
    WEEKDAYS,
    Diary,
    DiaryError,
    OpeningPeriod,
    parse_diary,
)
from ._slots import Slot, SlotVerdict, check_slot, ends_at_for, free_slots, slot_is_bookable
from ._speech import (
    REFERENCE_ALPHABET,
    REFERENCE_BYTES,
    REFERENCE_LENGTH,
    normalise_reference,
    reference_from,
    show_in_zone,
    speak_time,
)

__all__ = [
    "HORIZON_DAYS_RANGE",
    "LEAD_MINUTES_RANGE",
    "LIVE_STATES",
    "MAX_CHANGE_ATTEMPTS",
    "REFERENCE_ALPHABET",
    "REFERENCE_BYTES",
    "REFERENCE_LENGTH",
    "SLOT_MINUTES_RANGE",
    "TRANSITIONS",
    "WEEKDAYS",
    "Appointment",
    "AppointmentEffect",
    "AppointmentInput",
    "AppointmentState",
    "ChangeDecision",
    "ChangeGate",
    "Diary",
    "DiaryError",
    "OpeningPeriod",
    "Slot",
    "SlotVerdict",
    "check_slot",
    "ends_at_for",
    "free_slots",
    "may_change",
    "normalise_reference",
    "parse_diary",
    "reference_from",
    "show_in_zone",
    "slot_is_bookable",
    "speak_time",
    "transition",
]
