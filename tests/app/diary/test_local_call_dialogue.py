"""The built-in local model holding a call's conversation through the real pipeline,
diary and database: each turn gets the kept conversation, as the voice session gives it."""

from __future__ import annotations

import datetime as dt

import pytest

from app.services.call_context import CallContext
from app.tables import Appointment, Enquiry, TelephonyCall
from core.pipeline import CallToolPolicy, Finished
from tests.app.diary.calls import CALL_TOOLS, CALLER, LINE, a_call
from tests.app.services.test_pipeline import add_agent, only, turn
from tests.app.services.test_pipeline import owner  # noqa: F401  (fixture: an account id)

pytestmark = pytest.mark.anyio


class Conversation:
    def __init__(self, services, owner, agent, call) -> None:
        self.services, self.owner, self.agent, self.call = services, owner, agent, call
        self.history: list[dict[str, str]] = []

    async def say(self, text: str) -> str:
        events = await turn(self.services, self.owner, self.agent, text,
                            history=list(self.history), source="telephone",
                            policy=CallToolPolicy(timeout_seconds=8), call=self.call)
        answer = only(events, Finished).text
        self.history += [{"role": "user", "content": text},
                         {"role": "assistant", "content": answer}]
        return answer


async def a_conversation(services, owner, caller: str = CALLER) -> Conversation:
    agent = await add_agent(owner, model="local", tools=CALL_TOOLS)
    return Conversation(services, owner, agent, await a_call(owner, caller=caller))


async def test_a_booking_over_several_turns_in_the_diary_zone(services, owner, diary):
    talk = await a_conversation(services, owner)
    assert await talk.say("Hello, I'd like to book a check-up") == (
        "What day and time would suit you?")
    assert await talk.say("tomorrow at nine") == "May I have your name, please?"
    assert await talk.say("Jane Smith") == (
        "Shall I book Wednesday the third of March at nine a.m. for Jane Smith?")
    assert await Appointment.count() == 0
    said = await talk.say("yes please")
    assert said.startswith("You're booked for Wednesday 3 March at 9 am.")
    [row] = await Appointment.select()
    assert row["subject"] == "Check-up" and row["caller_name"] == "Jane Smith"
    assert row["starts_at"] == dt.datetime(2027, 3, 3, 9, 0, tzinfo=dt.UTC)


async def test_a_taken_time_is_met_with_free_ones(services, owner, diary):
    first = await a_conversation(services, owner)
    await first.say("Book me in for tomorrow at nine, my name is Jane Smith")
    await first.say("yes")
    other = TelephonyCall(number_id=first.call.line_id, e164=LINE, from_number="+447700900456",
                          provider="carrier", owner_id=owner)
    await other.save()
    second = Conversation(services, owner, first.agent,
                          CallContext(other.id, first.call.line_id, owner, "+447700900456"))
    await second.say("Book me in for tomorrow at nine, my name is Tom Hardy")
    said = await second.say("yes")
    assert said.startswith("I'm sorry, that time isn't free. I can offer Wednesday 3 March at "
                           "9:30 am")
    assert await second.say("the first one") == (
        "Shall I book Wednesday the third of March at half past nine a.m. for Tom Hardy?")
    await second.say("yes")
    assert await Appointment.count() == 2


async def test_a_message_keeps_name_number_and_text_apart(services, owner, diary):
    talk = await a_conversation(services, owner, caller="")
    await talk.say("Can I leave a message")
    await talk.say("Peter Mills")
    await talk.say("oh seven seven double oh nine oh oh four five six")
    said = await talk.say("The boiler is leaking again")
    assert said.startswith("Thank you. I've taken your message")
    [row] = await Enquiry.select()
    assert (row["caller_name"], row["caller_number"], row["message"]) == (
        "Peter Mills", "07700900456", "The boiler is leaking again")


async def test_a_call_back_number_other_than_the_calling_one_is_kept_beside_it(
        services, owner, diary):
    talk = await a_conversation(services, owner)
    await talk.say("I'd like to leave a message, my name is Peter Mills")
    await talk.say("oh one six three two nine six oh oh four five")
    await talk.say("Please ring me about the invoice")
    [row] = await Enquiry.select()
    assert row["caller_number"] == CALLER
    assert row["subject"] == "Message taken on a call (call back on 01632960045)"
