"""An appointment's life, and who may change it by telephone.

spec: telephony.md "Appointment" —

=========  ============================================  =========  ==========================
state      moved by                                      next       also
=========  ============================================  =========  ==========================
(none)     POST appointments, or booking on a call       booked     ``appointment_booked``
booked     change on a call (reference plus number or    moved      ``appointment_moved``
           name)
booked     DELETE appointment, or cancellation on a      cancelled  ``appointment_cancelled``
           call
=========  ============================================  =========  ==========================

Where the spec is silent: a moved appointment is booked at its new time, so it can be
moved again and cancelled like a booked one; cancelling a cancelled appointment (a
repeated DELETE) changes nothing and notifies nobody; nothing else moves a cancelled
appointment, and booking over an existing one is a bug, so those pairs are missing
from the table and raise ``LocalProtocolError``.

spec: "Diary (per account)" — "Changing an appointment by telephone requires the
reference plus either the calling number or the booked name; three attempts per call;
a refusal never says which part was wrong." ``may_change`` is the rule;
``ChangeGate`` counts one call's attempts and gives the sayable answer.
"""

from __future__ import annotations

__all__ = [
    "LIVE_STATES",
    "MAX_CHANGE_ATTEMPTS",
    "TRANSITIONS",
    "Appointment",
    "AppointmentEffect",
    "AppointmentInput",
    "AppointmentState",
    "ChangeDecision",
    "ChangeGate",
    "may_change",
    "transition",
]

import enum
import hmac

from .._transitions import look_up
from ..phone_numbers import InvalidPhoneNumber, normalise_e164
from ..records import frozen
from ..screening import normalise_name
from ._speech import normalise_reference

# spec: telephony.md "Limits" — "Change-by-telephone attempts: 3 per call".
MAX_CHANGE_ATTEMPTS = 3


class AppointmentState(enum.Enum):
    """Where an appointment stands; the values are those stored."""

    #: Not booked yet.
    NONE = "none"
    #: Booked at its first time.
    BOOKED = "booked"
    #: Moved to another time; otherwise like booked.
    MOVED = "moved"
    #: Cancelled; its slot is free again.
    CANCELLED = "cancelled"


class AppointmentInput(enum.Enum):
    """What can happen to an appointment."""

    #: A booking passed ``check_slot`` (by the API or on a call).
    BOOK = "book"
    #: A change on a call passed ``may_change`` and the new start passed ``check_slot``.
    MOVE = "move"
    #: DELETE on the API, or a cancellation on a call that passed ``may_change``.
    CANCEL = "cancel"


class AppointmentEffect(enum.Enum):
    """What the caller of the machine must do; the values are the outward
    notification events (spec: telephony.md "Outward notifications")."""

    #: Store the appointment; emit ``appointment_booked``.
    NOTIFY_BOOKED = "appointment_booked"
    #: Store the new time; emit ``appointment_moved``.
    NOTIFY_MOVED = "appointment_moved"
    #: Store the cancellation; emit ``appointment_cancelled``.
    NOTIFY_CANCELLED = "appointment_cancelled"
    #: Nothing to store or send.
    IGNORE = "ignore"


_S, _I, _E = AppointmentState, AppointmentInput, AppointmentEffect

#: States in which an appointment holds its slot and may be changed: a moved
#: appointment is changed as a booked one is.
LIVE_STATES = frozenset((_S.BOOKED, _S.MOVED))

#: ``(state, input) -> (side_effect, target)``.
TRANSITIONS: dict[
    tuple[AppointmentState, AppointmentInput], tuple[AppointmentEffect, AppointmentState]
] = {
    (_S.NONE, _I.BOOK): (_E.NOTIFY_BOOKED, _S.BOOKED),
    **{(live, _I.MOVE): (_E.NOTIFY_MOVED, _S.MOVED) for live in LIVE_STATES},
    **{(live, _I.CANCEL): (_E.NOTIFY_CANCELLED, _S.CANCELLED) for live in LIVE_STATES},
    (_S.CANCELLED, _I.CANCEL): (_E.IGNORE, _S.CANCELLED),
}


def transition(
    state: AppointmentState, given: AppointmentInput
) -> tuple[AppointmentEffect, AppointmentState]:
    """Return ``(side_effect, target)``; ``LocalProtocolError`` for a pair the table
    does not hold (moving a cancelled appointment, booking over one)."""
    return look_up(TRANSITIONS, state, given)


@frozen
class Appointment:
    """What a telephone change is checked against: the stored reference, the name it
    was booked under, the number it was booked from (``None`` if withheld or booked
    through the API) and its state."""

    reference: str
    caller_name: str
    caller_number: str | None
    state: AppointmentState


def may_change(
    reference_given: str | None,
    number_given: str | None,
    name_given: str | None,
    appointment: Appointment,
) -> bool:
    """Whether a caller may move or cancel ``appointment``.

    Needs the reference (as read back, see ``normalise_reference``) plus either the
    calling number (compared in E.164 form) or the booked name (compared by its
    screening normal form, so "Dr Jane O'Neil" is "jane oneil"). A cancelled
    appointment is never changed. Use it through ``ChangeGate`` on a call.
    """
    if appointment.state not in LIVE_STATES or not reference_given:
        return False
    reference = normalise_reference(reference_given).encode()
    if not hmac.compare_digest(reference, appointment.reference.encode()):
        return False
    return _same_number(number_given, appointment.caller_number) or _same_name(
        name_given, appointment.caller_name
    )


def _same_number(given: str | None, booked: str | None) -> bool:
    if not given or not booked:
        return False
    try:
        return normalise_e164(given) == normalise_e164(booked)
    except InvalidPhoneNumber:
        return False


def _same_name(given: str | None, booked: str) -> bool:
    if not given:
        return False
    normal_form = normalise_name(given)
    return bool(normal_form) and normal_form == normalise_name(booked)


class ChangeDecision(enum.Enum):
    """The answer to one attempt to change an appointment on a call."""

    #: The details match: go ahead with the move or cancellation.
    ALLOWED = "allowed"
    #: The details do not match; the caller may try again.
    REFUSED = "refused"
    #: The details did not match three times: no more attempts on this call.
    EXHAUSTED = "exhausted"

    @property
    def text(self) -> str | None:
        """What the agent says; the same words whichever detail was wrong."""
        return _SAYABLE[self]


_SAYABLE = {
    ChangeDecision.ALLOWED: None,
    ChangeDecision.REFUSED: "I'm sorry, I can't find a booking with those details.",
    ChangeDecision.EXHAUSTED: (
        "I'm sorry, I can't change a booking on this call. I can take a message instead."
    ),
}


class ChangeGate:
    """One call's attempts to change appointments.

    Every refused attempt counts; after the third nothing more is checked on this
    call, so a caller cannot try references until one fits. An allowed attempt does
    not count: a caller may change two bookings that are theirs.
    """

    def __init__(self, refused: int = 0) -> None:
        self._refused = refused

    @property
    def remaining(self) -> int:
        """Attempts left on this call."""
        return max(0, MAX_CHANGE_ATTEMPTS - self._refused)

    def attempt(
        self,
        reference_given: str | None,
        number_given: str | None,
        name_given: str | None,
        appointment: Appointment | None,
    ) -> ChangeDecision:
        """Check one attempt. ``appointment`` is the one found by the reference given,
        or ``None`` when no booking has it; both cost an attempt alike."""
        if self.remaining == 0:
            return ChangeDecision.EXHAUSTED
        if appointment is not None and may_change(
            reference_given, number_given, name_given, appointment
        ):
            return ChangeDecision.ALLOWED
        self._refused += 1
        return ChangeDecision.REFUSED if self.remaining else ChangeDecision.EXHAUSTED
