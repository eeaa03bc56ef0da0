"""The built-in tools an agent uses on a telephone call, for the line's account.

spec: telephony.md "Tools on a call", "Diary (per account)", "Screening list". Every
tool is ``usable_on_call``, wants the call's ``CallContext`` (the account it acts for,
the calling number, the attempts and the transfer decision), and answers with short
text the agent can say (``text``) plus the facts it may need next. Outside a call
they refuse: they have no account to act for.

* ``offer_times`` — the next free slots, from a day if one is asked for;
* ``book_appointment`` — a local date and time in the diary's zone; "that time has
  gone" when another caller was quicker (the database decides, see ``appointments``);
* ``change_appointment`` and ``cancel_appointment`` — the reference plus the calling
  number or the booked name; three refused attempts per call, counted in the
  ``CallContext``; a refusal never says which part was wrong (``core.diary.ChangeGate``);
* ``take_message`` — an enquiry with the calling number and the call;
* ``put_through`` — asks for a transfer to the line's transfer number; while the
  account keeps a screening list it is allowed only when the caller's name was checked
  and is clear, and neither the list nor the check is ever mentioned.

Times are local wall times of the diary's zone ("2027-03-02", "14:30" or "2:30 pm"),
which the agent hears from the caller; the repeated hour at a clock change means its
first pass, as the slots offer it.
"""

from __future__ import annotations

__all__ = ["CallTools", "OFFERED_TIMES"]

import datetime as dt
import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from app import db
from app.diary.appointments import Appointments, Booking, SlotRefused
from app.diary.diaries import diary_zone
from app.diary.enquiries import Enquiries
from app.diary.screening import ScreeningList
from app.errors import NotFound
from app.services.call_context import CallContext
from core.diary import (
    MAX_CHANGE_ATTEMPTS,
    Appointment,
    AppointmentState,
    ChangeDecision,
    ChangeGate,
    SlotVerdict,
    normalise_reference,
    speak_time,
)
from core.pipeline import ToolFailed, ToolSpec
from core.screening import Verdict, transfer_allowed

OFFERED_TIMES = 3  # a caller can hold three times in mind, not more

_STRING = {"type": "string"}


def _spec(name: str, description: str, properties: dict[str, Any], required: list[str], *,
          side_effecting: bool) -> ToolSpec:
    return ToolSpec(name, description, {"type": "object", "properties": properties,
                                        "required": required},
                    side_effecting=side_effecting, usable_on_call=True)


_DATE = {**_STRING, "description": "day, YYYY-MM-DD"}
_TIME = {**_STRING, "description": "time of day, e.g. 14:30 or 2:30 pm"}
_NAME = {**_STRING, "description": "caller's full name"}
_REFERENCE = {**_STRING, "description": "booking reference the caller reads out"}

OFFER_TIMES = _spec(
    "offer_times", "Free appointment times in the diary, soonest first. Offer them to the "
    "caller before booking.", {"date": {**_STRING, "description": "earliest day wanted, "
                                        "YYYY-MM-DD; today when not given"}}, [],
    side_effecting=False)
BOOK_APPOINTMENT = _spec(
    "book_appointment", "Book an appointment in the diary at a free time the caller chose.",
    {"date": _DATE, "time": _TIME, "caller_name": _NAME,
     "subject": {**_STRING, "description": "what the appointment is about"}},
    ["date", "time", "caller_name", "subject"], side_effecting=True)
CHANGE_APPOINTMENT = _spec(
    "change_appointment", "Move the caller's booked appointment to another free time. Needs "
    "the booking reference; give the booked name too if the caller says it.",
    {"reference": _REFERENCE, "date": _DATE, "time": _TIME, "caller_name": _NAME},
    ["reference", "date", "time"], side_effecting=True)
CANCEL_APPOINTMENT = _spec(
    "cancel_appointment", "Cancel the caller's booked appointment. Needs the booking "
    "reference; give the booked name too if the caller says it.",
    {"reference": _REFERENCE, "caller_name": _NAME}, ["reference"], side_effecting=True)
TAKE_MESSAGE = _spec(
    "take_message", "Take a message for the office: who is calling, what about, and the "
    "message. Someone will get back to the caller.",
    {"caller_name": _NAME, "subject": {**_STRING, "description": "what it is about"},
     "message": {**_STRING, "description": "the message to pass on"},
     "callback_number": {**_STRING, "description": "the number to call back on, when the "
                         "caller gives one"}},
    ["subject", "message"], side_effecting=True)
PUT_THROUGH = _spec(
    "put_through", "Put the caller through to a person at the office. Give the caller's "
    "full name as they said it.", {"caller_name": _NAME}, [], side_effecting=True)

_SAY_OFFER_MESSAGE = "I can take a message instead, if you like."
_SAY_NOT_BOOKING = f"I'm sorry, I can't book appointments on this line. {_SAY_OFFER_MESSAGE}"
_SAY_NO_TIMES = f"I'm sorry, there are no free times to offer. {_SAY_OFFER_MESSAGE}"
_SAY_NOT_FREE = "I'm sorry, that time isn't available. Shall I offer some free times?"
_SAY_GONE = "I'm sorry, that time has just gone. Shall I offer some other free times?"
_SAY_NO_TRANSFER = ("I'm sorry, I can't put you through just now. I can take a message and "
                    "someone will get back to you.")
_SAY_FULL_NAME = "Before I put you through, may I have your full name?"

# The blanks before "am" are taken whole (``\s*+``): "am" starts with a letter, so
# giving blanks back could never help, and trying would scan a long run again and again.
_CLOCK = re.compile(r"^\s*(\d{1,2})(?:[:.h](\d{2}))?\s*+(am|pm|a\.m\.|p\.m\.)?\s*$", re.I)


def parse_wall_time(text: str) -> dt.time | None:
    """A time of day as a caller or a model writes it: "14:30", "2:30 pm", "2pm",
    "midday", "noon", "midnight"; None for anything else."""
    spoken = text.strip().lower()
    if spoken in ("midday", "noon"):
        return dt.time(12, 0)
    if spoken == "midnight":
        return dt.time(0, 0)
    match = _CLOCK.match(spoken)
    if match is None:
        return None
    hour, minute, half = int(match[1]), int(match[2] or 0), (match[3] or "").replace(".", "")
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    return dt.time(hour, minute)


def _parse_day(text: Any) -> dt.date:
    try:
        if isinstance(text, str) and len(text.strip()) == 10:
            return dt.date.fromisoformat(text.strip())
    except ValueError:
        pass
    raise ToolFailed("the date must be written YYYY-MM-DD")


def _local_instant(day: dt.date, clock: dt.time, zone: dt.tzinfo) -> dt.datetime:
    """The instant of a wall time in ``zone``; a repeated hour means its first pass."""
    return dt.datetime.combine(day, clock).replace(tzinfo=zone, fold=0).astimezone(dt.UTC)


def _needs_call(call: CallContext | None) -> CallContext:
    if call is None:
        raise ToolFailed("it works only on a telephone call")
    return call


def _spelt(reference: str) -> str:
    return " ".join(reference)


class CallTools:
    """The tools, bound to the diary's services."""

    def __init__(self, appointments: Appointments, enquiries: Enquiries,
                 screening: ScreeningList) -> None:
        self.appointments = appointments
        self.enquiries = enquiries
        self.screening = screening

    def handlers(self) -> list[tuple[ToolSpec, Callable[..., Awaitable[Any]]]]:
        return [(OFFER_TIMES, self.offer_times), (BOOK_APPOINTMENT, self.book),
                (CHANGE_APPOINTMENT, self.change), (CANCEL_APPOINTMENT, self.cancel),
                (TAKE_MESSAGE, self.take_message), (PUT_THROUGH, self.put_through)]

    @staticmethod
    def _wall(arguments: dict[str, Any]) -> tuple[dt.date, dt.time]:
        """The ``date`` and ``time`` arguments, as a local day and time of day."""
        clock = parse_wall_time(str(arguments.get("time") or ""))
        if clock is None:
            raise ToolFailed("the time must be a time of day such as 14:30 or 2:30 pm")
        return _parse_day(arguments.get("date")), clock

    async def offer_times(self, arguments: dict[str, Any],
                          call: CallContext | None) -> dict[str, Any]:
        call = _needs_call(call)
        since = None
        if arguments.get("date"):
            zone = await diary_zone(call.account_id)
            since = _local_instant(_parse_day(arguments["date"]), dt.time(0, 0), zone)
        slots, stored, now = await self.appointments.free(call.account_id, since=since,
                                                          limit=OFFERED_TIMES)
        diary = stored.diary
        if not diary.enabled:
            return {"text": _SAY_NOT_BOOKING, "times": []}
        if not slots:
            return {"text": _SAY_NO_TIMES, "times": []}
        spoken = [speak_time(start, diary.zone, now) for start, _ in slots]
        listed = spoken[0] if len(spoken) == 1 else f"{', '.join(spoken[:-1])} or {spoken[-1]}"
        times = [{"date": start.astimezone(diary.zone).date().isoformat(),
                  "time": start.astimezone(diary.zone).strftime("%H:%M"), "spoken": words}
                 for (start, _), words in zip(slots, spoken)]
        return {"text": f"I can offer {listed}. Which would suit you?", "times": times}

    async def book(self, arguments: dict[str, Any], call: CallContext | None) -> dict[str, Any]:
        call = _needs_call(call)
        day, clock = self._wall(arguments)
        name = " ".join(str(arguments.get("caller_name") or "").split())[:200]
        subject = " ".join(str(arguments.get("subject") or "").split())[:500]
        if not name or not subject:
            raise ToolFailed("the caller's name and what the appointment is about are needed")
        zone = await diary_zone(call.account_id)
        try:
            row, stored = await self.appointments.book(
                call.account_id, _local_instant(day, clock, zone),
                Booking(name, subject, caller_number=call.caller_number or None,
                        call_id=call.call_id))
        except SlotRefused as refused:
            return {"text": _refusal_text(refused.verdict), "booked": False}
        when = speak_time(row["starts_at"], stored.diary.zone, self.appointments.clock.now())
        return {"text": f"You're booked for {when}. Your reference is "
                        f"{_spelt(row['reference'])}.", "booked": True,
                "reference": row["reference"], "when": when}

    async def _gate(self, call: CallContext, arguments: dict[str, Any]) -> tuple[
            ChangeDecision, dict[str, Any] | None]:
        """One change attempt: the decision, and the appointment when it is allowed."""
        reference = normalise_reference(str(arguments.get("reference") or ""))
        row = await self.appointments.by_reference(call.account_id, reference) \
            if reference else None
        booked = None if row is None else Appointment(
            row["reference"], row["caller_name"], row["caller_number"],
            AppointmentState(row["state"]))
        gate = ChangeGate(call.change_attempts)
        decision = gate.attempt(reference, call.caller_number or None,
                                arguments.get("caller_name") or None, booked)
        call.change_attempts = MAX_CHANGE_ATTEMPTS - gate.remaining
        return decision, row if decision is ChangeDecision.ALLOWED else None

    async def change(self, arguments: dict[str, Any], call: CallContext | None) -> dict[str, Any]:
        call = _needs_call(call)
        day, clock = self._wall(arguments)
        decision, row = await self._gate(call, arguments)
        if row is None:
            return {"text": decision.text, "changed": False}
        zone = await diary_zone(call.account_id)
        try:
            moved, stored = await self.appointments.move(
                call.account_id, row["id"], _local_instant(day, clock, zone))
        except SlotRefused as refused:
            return {"text": _refusal_text(refused.verdict), "changed": False}
        except NotFound:  # cancelled by someone else since it was found
            return {"text": ChangeDecision.REFUSED.text, "changed": False}
        when = speak_time(moved["starts_at"], stored.diary.zone, self.appointments.clock.now())
        return {"text": f"Done. Your appointment is now {when}. The reference stays "
                        f"{_spelt(moved['reference'])}.", "changed": True, "when": when}

    async def cancel(self, arguments: dict[str, Any], call: CallContext | None) -> dict[str, Any]:
        call = _needs_call(call)
        decision, row = await self._gate(call, arguments)
        if row is None:
            return {"text": decision.text, "cancelled": False}
        try:
            cancelled, stored = await self.appointments.cancel(call.account_id, row["id"])
        except NotFound:  # gone since it was found
            return {"text": ChangeDecision.REFUSED.text, "cancelled": False}
        when = speak_time(cancelled["starts_at"], stored.diary.zone,
                          self.appointments.clock.now())
        return {"text": f"Your appointment on {when} is cancelled.", "cancelled": True}

    async def take_message(self, arguments: dict[str, Any],
                           call: CallContext | None) -> dict[str, Any]:
        call = _needs_call(call)
        message = str(arguments.get("message") or "").strip()
        if not message:
            raise ToolFailed("the message to pass on is needed")
        subject = str(arguments.get("subject") or "")
        callback = " ".join(str(arguments.get("callback_number") or "").split())[:40]
        if callback and call.caller_number and callback != call.caller_number:
            # The calling number stays the one the call came from; the other is said.
            subject = f"{subject} (call back on {callback})".strip()
        elif callback and not call.caller_number:
            call = replace(call, caller_number=callback)  # withheld: the number given
        await self.enquiries.take(call, caller_name=arguments.get("caller_name") or None,
                                  subject=subject, message=message)
        return {"text": "Thank you. I've taken your message and someone will get back to you.",
                "taken": True}

    async def put_through(self, arguments: dict[str, Any],
                          call: CallContext | None) -> dict[str, Any]:
        call = _needs_call(call)
        async with db.connection() as connection:
            transfer_to = await connection.fetchval(
                "SELECT transfer_e164 FROM telephony_line WHERE id = $1", call.line_id)
        if not transfer_to:
            return {"text": _SAY_NO_TRANSFER, "putting_through": False}
        list_exists, verdict = await self.screening.check(
            call.account_id, arguments.get("caller_name") or None)
        if list_exists:
            if verdict is Verdict.NOT_CHECKED and call.caller_verdict is None:
                return {"text": _SAY_FULL_NAME, "putting_through": False}
            # A match stays a match for the rest of the call, whatever name comes next.
            if call.caller_verdict != Verdict.MATCH.value and verdict is not Verdict.NOT_CHECKED:
                call.caller_verdict = verdict.value
        kept = Verdict(call.caller_verdict) if call.caller_verdict else None
        call.transfer_requested = True
        call.transfer_allowed = transfer_allowed(list_exists, kept)
        if not call.transfer_allowed:
            return {"text": _SAY_NO_TRANSFER, "putting_through": False}
        return {"text": "I'll put you through now.", "putting_through": True}


def _refusal_text(verdict: SlotVerdict) -> str:
    if verdict is SlotVerdict.TAKEN:
        return _SAY_GONE
    if verdict is SlotVerdict.DIARY_OFF:
        return _SAY_NOT_BOOKING
    return _SAY_NOT_FREE
