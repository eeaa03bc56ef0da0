"""The built-in call tools driven through the pipeline with a CallContext, as the voice
session drives them (spec: telephony.md "Tools on a call", "Diary (per account)",
"Screening list", "Appointment")."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import pytest

from app.services.call_context import CallContext
from app.tables import Appointment, Enquiry, NotifyOutbox, TelephonyCall
from core.pipeline import CallToolPolicy, ToolFinished, ToolStatus
from tests.app.diary.calls import CALL_TOOLS, CALLER, a_call
from tests.app.services.test_pipeline import add_agent, only, turn
from tests.app.services.test_pipeline import owner  # noqa: F401  (fixture: an account id)
from tests.fakes.upstream import Behaviour, ToolCall

pytestmark = pytest.mark.anyio

TRANSFER_TO = "+441632960999"


async def use(services, fake, owner, call: CallContext | None, name: str,
              **arguments: Any) -> tuple[dict[str, Any] | str, ToolFinished]:
    """One turn in which the model calls ``name``; the tool's answer, parsed."""
    fake.requests.clear()
    fake.script = [Behaviour(tool_call=ToolCall(name, json.dumps(arguments))),
                   Behaviour(text="Said.")]
    agent = await add_agent(owner, tools=CALL_TOOLS)
    events = await turn(services, owner, agent, "Caller speaking.",
                        policy=CallToolPolicy(timeout_seconds=8), source="telephone", call=call)
    finished = only(events, ToolFinished)
    try:
        return json.loads(finished.content), finished
    except ValueError:
        return finished.content, finished


async def outbox_events() -> list[str]:
    return [row["event"] for row in await NotifyOutbox.select().order_by(NotifyOutbox.created_at)]


async def test_every_call_tool_is_built_in_and_usable_on_a_call(services):
    specs = {spec.name: spec for spec in services.tools.builtin_specs()}
    for name in CALL_TOOLS:
        assert specs[name].usable_on_call, name


async def test_offer_then_book_on_a_call(services, fake, owner, diary):
    call = await a_call(owner)
    offered, _ = await use(services, fake, owner, call, "offer_times", date="2027-03-03")
    assert offered["text"] == ("I can offer Wednesday 3 March at 9 am, Wednesday 3 March at "
                               "9:30 am or Wednesday 3 March at 10 am. Which would suit you?")
    first = offered["times"][0]
    booked, finished = await use(services, fake, owner, call, "book_appointment",
                                 date=first["date"], time="9 am", caller_name="Jane Smith",
                                 subject="Lease renewal")
    assert finished.status is ToolStatus.OK and booked["booked"]
    reference = booked["reference"]
    assert booked["text"] == (f"You're booked for Wednesday 3 March at 9 am. Your reference is "
                              f"{' '.join(reference)}.")
    [row] = await Appointment.select()
    assert row["caller_number"] == CALLER and row["call_id"] == call.call_id
    assert row["starts_at"] == dt.datetime(2027, 3, 3, 9, 0, tzinfo=dt.UTC)
    [outbox] = await NotifyOutbox.select()
    assert outbox["event"] == "appointment_booked" and outbox["subject_id"] == row["id"]
    assert outbox["text"].startswith("Appointment booked for Wednesday 3 March at 9 am: "
                                     "Jane Smith (+447700900123).")
    again, _ = await use(services, fake, owner, call, "offer_times", date="2027-03-03")
    assert "9 am" not in again["text"]


async def test_a_second_caller_is_told_the_time_has_gone(services, fake, owner, diary):
    first, second = await a_call(owner), await a_call_again(owner)
    await use(services, fake, owner, first, "book_appointment", date="2027-03-03",
              time="10:00", caller_name="Jane Smith", subject="Lease")
    gone, _ = await use(services, fake, owner, second, "book_appointment", date="2027-03-03",
                        time="10:00", caller_name="John Brown", subject="Lease")
    assert gone == {"text": "I'm sorry, that time has just gone. Shall I offer some other free "
                            "times?", "booked": False}
    closed, _ = await use(services, fake, owner, second, "book_appointment", date="2027-03-06",
                          time="10:00", caller_name="John Brown", subject="Lease")
    assert closed["text"].startswith("I'm sorry, that time isn't available.")
    assert await outbox_events() == ["appointment_booked"]


async def a_call_again(owner: uuid.UUID, caller: str = "+447700900456") -> CallContext:
    """A second call on the line made by ``a_call``."""
    line = await TelephonyCall.select().where(TelephonyCall.owner_id == owner).first()
    call = TelephonyCall(number_id=line["number_id"], e164=line["e164"], from_number=caller,
                         provider="carrier", owner_id=owner)
    await call.save()
    return CallContext(call.id, line["number_id"], owner, caller)


async def _book(services, fake, owner, call) -> str:
    booked, _ = await use(services, fake, owner, call, "book_appointment", date="2027-03-03",
                          time="10:00", caller_name="Dr Jane O'Neil", subject="Lease")
    return booked["reference"]


async def test_a_refused_change_never_says_which_part_was_wrong(services, fake, owner, diary):
    reference = await _book(services, fake, owner, await a_call(owner))
    other = await a_call_again(owner)  # another number: the name must match then
    wrong_reference, _ = await use(services, fake, owner, other, "change_appointment",
                                   reference="AAAAAA", date="2027-03-04", time="10:00",
                                   caller_name="Jane O'Neil")
    wrong_name, _ = await use(services, fake, owner, other, "change_appointment",
                              reference=reference, date="2027-03-04", time="10:00",
                              caller_name="John Brown")
    assert wrong_reference == wrong_name == {
        "text": "I'm sorry, I can't find a booking with those details.", "changed": False}
    assert other.change_attempts == 2
    third, _ = await use(services, fake, owner, other, "cancel_appointment", reference=reference)
    assert third["text"] == ("I'm sorry, I can't change a booking on this call. I can take a "
                             "message instead.")
    # Three refused attempts: even the right details are not checked on this call.
    right, _ = await use(services, fake, owner, other, "change_appointment",
                         reference=reference, date="2027-03-04", time="10:00",
                         caller_name="Jane O'Neil")
    assert right["changed"] is False and other.change_attempts == 3
    [row] = await Appointment.select()
    assert row["state"] == "booked" and await outbox_events() == ["appointment_booked"]


async def test_a_change_with_the_booked_name_from_another_number_moves_it(services, fake, owner,
                                                                         diary):
    reference = await _book(services, fake, owner, await a_call(owner))
    other = await a_call_again(owner)
    moved, _ = await use(services, fake, owner, other, "change_appointment",
                         reference=reference.lower()[:3] + " " + reference.lower()[3:],
                         date="2027-03-04", time="2:30 pm", caller_name="jane oneil")
    assert moved["text"] == (f"Done. Your appointment is now Thursday 4 March at 2:30 pm. The "
                             f"reference stays {' '.join(reference)}.")
    [row] = await Appointment.select()
    assert row["state"] == "moved" and row["reference"] == reference
    assert row["starts_at"] == dt.datetime(2027, 3, 4, 14, 30, tzinfo=dt.UTC)
    assert await outbox_events() == ["appointment_booked", "appointment_moved"]
    assert other.change_attempts == 0  # an allowed attempt does not count


async def test_a_cancellation_from_the_booking_number_needs_no_name(services, fake, owner, diary):
    call = await a_call(owner)
    reference = await _book(services, fake, owner, call)
    later = await a_call_again(owner, caller=CALLER)  # the same caller rings again
    cancelled, _ = await use(services, fake, owner, later, "cancel_appointment",
                             reference=reference)
    assert cancelled == {"text": "Your appointment on Wednesday 3 March at 10 am is cancelled.",
                         "cancelled": True}
    assert await outbox_events() == ["appointment_booked", "appointment_cancelled"]
    again, _ = await use(services, fake, owner, later, "cancel_appointment", reference=reference)
    assert again["cancelled"] is False  # a cancelled booking is not found again


async def test_a_withheld_number_changes_only_with_the_name(services, fake, owner, diary):
    reference = await _book(services, fake, owner, await a_call(owner))
    withheld = await a_call_again(owner, caller="")
    refused, _ = await use(services, fake, owner, withheld, "cancel_appointment",
                           reference=reference)
    assert refused["cancelled"] is False
    allowed, _ = await use(services, fake, owner, withheld, "cancel_appointment",
                           reference=reference, caller_name="Jane O'Neil")
    assert allowed["cancelled"] is True


async def test_taking_a_message_on_a_call(services, fake, owner, diary):
    call = await a_call(owner)
    taken, _ = await use(services, fake, owner, call, "take_message", caller_name="Jane Smith",
                         subject="Boiler", message="The boiler is leaking again.")
    assert taken["taken"] is True
    [row] = await Enquiry.select()
    assert (row["caller_number"], row["call_id"], row["message"]) == (
        CALLER, call.call_id, "The boiler is leaking again.")
    assert await outbox_events() == ["message_taken"]


async def test_appointments_and_enquiries_outlive_their_call(services, fake, owner, diary):
    call = await a_call(owner)
    await _book(services, fake, owner, call)
    await use(services, fake, owner, call, "take_message", subject="Keys", message="Left keys.")
    await TelephonyCall.delete().where(TelephonyCall.id == call.call_id)
    [appointment] = await Appointment.select()
    [enquiry] = await Enquiry.select()
    assert appointment["call_id"] is None and appointment["state"] == "booked"
    assert enquiry["call_id"] is None and enquiry["message"] == "Left keys."


# -- putting a caller through


async def _screening(services, owner, names: str) -> None:
    await services.diary.screening.add(owner, names, None, actor=owner)


async def test_without_a_list_the_caller_is_put_through(services, fake, owner, diary):
    call = await a_call(owner, transfer_e164=TRANSFER_TO)
    said, _ = await use(services, fake, owner, call, "put_through")
    assert said == {"text": "I'll put you through now.", "putting_through": True}
    assert call.transfer_requested and call.transfer_allowed and call.caller_verdict is None


async def test_a_line_without_a_transfer_number_puts_nobody_through(services, fake, owner, diary):
    call = await a_call(owner)
    said, _ = await use(services, fake, owner, call, "put_through", caller_name="Jane Smith")
    assert said["putting_through"] is False and not call.transfer_requested


async def test_with_a_list_a_clear_name_is_put_through(services, fake, owner, diary):
    await _screening(services, owner, "Acme Widgets Ltd\nJohn Brown")
    call = await a_call(owner, transfer_e164=TRANSFER_TO)
    said, _ = await use(services, fake, owner, call, "put_through", caller_name="Jane Smith")
    assert said["putting_through"] is True
    assert call.caller_verdict == "clear" and call.transfer_allowed


async def test_with_a_list_a_match_is_not_put_through_and_never_told_why(services, fake, owner,
                                                                         diary):
    await _screening(services, owner, "Acme Widgets Ltd\nJohn Brown")
    call = await a_call(owner, transfer_e164=TRANSFER_TO)
    said, finished = await use(services, fake, owner, call, "put_through",
                               caller_name="Mr Jon Brown")
    assert said == {"text": "I'm sorry, I can't put you through just now. I can take a message "
                            "and someone will get back to you.", "putting_through": False}
    assert call.caller_verdict == "match"
    assert call.transfer_requested and not call.transfer_allowed
    for word in ("list", "check", "screen", "conflict", "Brown", "Acme"):
        assert word.lower() not in finished.content.lower()
    # Another name later in the call does not undo the match.
    again, _ = await use(services, fake, owner, call, "put_through", caller_name="Jane Smith")
    assert again["putting_through"] is False and call.caller_verdict == "match"


async def test_with_a_list_a_surname_alone_is_not_checked(services, fake, owner, diary):
    await _screening(services, owner, "John Brown")
    call = await a_call(owner, transfer_e164=TRANSFER_TO)
    asked, _ = await use(services, fake, owner, call, "put_through", caller_name="Smith")
    assert asked == {"text": "Before I put you through, may I have your full name?",
                     "putting_through": False}
    assert not call.transfer_requested and call.caller_verdict is None
    clear, _ = await use(services, fake, owner, call, "put_through", caller_name="Jane Smith")
    assert clear["putting_through"] is True and call.caller_verdict == "clear"


async def test_the_call_tools_refuse_outside_a_call(services, fake, owner, diary):
    for name, arguments in (("offer_times", {}), ("take_message", {"subject": "a",
                                                                  "message": "b"})):
        fake.requests.clear()
        fake.script = [Behaviour(tool_call=ToolCall(name, json.dumps(arguments))),
                       Behaviour(text="Said.")]
        agent = await add_agent(owner, tools=[name])
        finished = only(await turn(services, owner, agent, "Hello."), ToolFinished)
        assert finished.status is ToolStatus.ERROR
        assert "only on a telephone call" in finished.content
    assert await Enquiry.count() == 0


async def test_the_local_model_books_by_rule_on_a_call(services, owner, diary):
    call = await a_call(owner)
    agent = await add_agent(owner, model="local", tools=CALL_TOOLS)
    asked = "I'd like to book an appointment on 2027-03-03 at 11:30, my name is Jane Smith"
    events = await turn(services, owner, agent, asked, policy=CallToolPolicy(timeout_seconds=8),
                        source="telephone", call=call)
    assert events[-1].text == ("Shall I book Wednesday the third of March at half past "
                               "eleven a.m. for Jane Smith?")  # said back first
    history = [{"role": "user", "content": asked},
               {"role": "assistant", "content": events[-1].text}]
    events = await turn(services, owner, agent, "Yes", policy=CallToolPolicy(timeout_seconds=8),
                        source="telephone", call=call, history=history)
    finished = only(events, ToolFinished)
    assert finished.name == "book_appointment" and finished.status is ToolStatus.OK
    assert events[-1].text.startswith("You're booked for Wednesday 3 March at 11:30 am.")
    [row] = await Appointment.select()
    assert row["caller_name"] == "Jane Smith" and row["call_id"] == call.call_id


async def test_on_a_call_a_repeated_hour_means_its_first_pass(services, fake, owner):
    """Lord Howe Island goes back half an hour at 02:00 on 2027-04-04: 01:30 happens at
    +11:00 and again at +10:30; a caller asking for 01:30 gets the first."""
    services.diary.clock.now = lambda: dt.datetime(2027, 3, 30, tzinfo=dt.UTC)
    await services.diary.diaries.put(owner, {
        "timezone": "Australia/Lord_Howe", "slot_minutes": 30, "lead_minutes": 0,
        "horizon_days": 30, "enabled": True,
        "hours": [{"weekday": 6, "opens_minute": 60, "closes_minute": 180}]}, actor=owner)
    call = await a_call(owner)
    offered, _ = await use(services, fake, owner, call, "offer_times", date="2027-04-04")
    assert [t["time"] for t in offered["times"]] == ["01:00", "01:30", "02:00"]
    booked, _ = await use(services, fake, owner, call, "book_appointment", date="2027-04-04",
                          time="1:30 am", caller_name="Jane Smith", subject="Night shift")
    assert booked["booked"] is True
    [row] = await Appointment.select()
    assert row["starts_at"] == dt.datetime(2027, 4, 3, 14, 30, tzinfo=dt.UTC)  # 01:30 +11:00


@pytest.mark.parametrize("spoken, expected", [
    ("14:30", dt.time(14, 30)), ("2:30 pm", dt.time(14, 30)), ("2pm", dt.time(14, 0)),
    ("2 P.M.", dt.time(14, 0)), ("12 am", dt.time(0, 0)), ("12:15 pm", dt.time(12, 15)),
    ("9.45", dt.time(9, 45)), ("midday", dt.time(12, 0)), ("noon", dt.time(12, 0)),
    ("midnight", dt.time(0, 0)), ("0900", None), ("13 pm", None), ("24:00", None),
    ("9:75", None), ("teatime", None), ("", None),
])
def test_times_of_day_as_callers_say_them(spoken, expected):
    from app.diary.call_tools import parse_wall_time

    assert parse_wall_time(spoken) == expected


def test_a_time_padded_with_blanks_is_read_in_one_pass():
    from app.diary.call_tools import parse_wall_time

    # Blanks a model wrote between the hour and the rest: tried split by split, hours.
    assert parse_wall_time("1" + " " * 256_000 + "x") is None
    assert parse_wall_time("2" + " " * 256_000 + "pm") == dt.time(14, 0)
