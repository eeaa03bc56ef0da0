"""Talking to a line in text (``POST /api/lines/{id}/conversation``): the line's agent
under the rules of a call, through the real pipeline, diary and database."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from app.tables import Appointment, AuditEntry, Chat, ChatMessage
from core.pipeline import ToolSpec
from tests.support.diary import LONDON_DIARY, NOW
from tests.app.telephony.deployment import deployment

pytestmark = pytest.mark.anyio

CALL_TOOLS = ["offer_times", "book_appointment", "change_appointment", "cancel_appointment",
              "take_message", "put_through"]


@pytest.fixture
async def line(api, services):
    services.diary.clock.now = lambda: NOW
    setup = await deployment(api, services)
    diary = await api.put("/api/diary", headers=setup.owner, json=LONDON_DIARY)
    assert diary.status_code == 200, diary.text
    await tools(setup, CALL_TOOLS)
    return setup


async def tools(setup, names: list[str]) -> None:
    agent = await setup.api.patch(f"/api/agents/{setup.agent_id}", headers=setup.owner,
                                  json={"tools": names})
    assert agent.status_code == 200, agent.text


class Talk:
    """One operator's conversation with the line."""

    def __init__(self, setup, headers) -> None:
        self.setup, self.headers = setup, headers
        self.conversation_id: str | None = None

    async def say(self, text: str, status: int = 200) -> dict:
        body = {"text": text}
        if self.conversation_id is not None:
            body["conversation_id"] = self.conversation_id
        response = await self.setup.api.post(
            f"/api/lines/{self.setup.line['id']}/conversation", headers=self.headers, json=body)
        assert response.status_code == status, response.text
        answer = response.json()
        if status == 200:
            self.conversation_id = answer["conversation_id"]
        return answer


async def test_a_booking_over_several_turns_creates_the_appointment(line):
    talk = Talk(line, line.owner)
    assert (await talk.say("Hello, I'd like to book a check-up"))["reply"] == (
        "What day and time would suit you?")
    assert (await talk.say("tomorrow at nine"))["reply"] == "May I have your name, please?"
    asked = await talk.say("Jane Smith")
    assert asked["reply"] == (
        "Shall I book Wednesday the third of March at nine a.m. for Jane Smith?")
    assert asked["tool_calls"] == [] and await Appointment.count() == 0
    booked = await talk.say("yes please")
    assert booked["reply"].startswith("You're booked for Wednesday 3 March at 9 am.")
    [tool] = booked["tool_calls"]
    assert (tool["name"], tool["status"]) == ("book_appointment", "ok")
    assert tool["arguments"]["caller_name"] == "Jane Smith"
    assert booked["ended"] is None
    [row] = await Appointment.select()
    assert row["starts_at"] == dt.datetime(2027, 3, 3, 9, 0, tzinfo=dt.UTC)
    assert row["call_id"] is None and row["caller_number"] is None  # no call, no number
    # The transcript is a conversation of the line's account, kept like a call's.
    chat = await line.api.get(f"/api/chats/{booked['chat_id']}", headers=line.owner)
    assert [m["role"] for m in chat.json()["messages"]] == ["user", "assistant"] * 4
    audited = await AuditEntry.select().where(
        AuditEntry.kind == "telephony.line.talked").order_by(AuditEntry.id)
    assert len(audited) == 4
    assert {entry["subject"] for entry in audited} == {line.line["id"]}
    assert str(audited[-1]["actor_id"]) == line.owner_id
    assert json.loads(audited[-1]["data"])["tools"] == ["book_appointment"]


async def test_a_tool_not_marked_for_calls_is_refused_and_never_runs(line, services):
    ran = []

    async def book_visit(arguments):
        ran.append(arguments)
        return {"booked": True}

    services.tools.register(ToolSpec("book_visit", "Books a visit.", side_effecting=True),
                            book_visit)
    await tools(line, ["book_visit"])
    answer = await Talk(line, line.owner).say("I would like to book a visit")
    [tool] = answer["tool_calls"]
    assert (tool["name"], tool["status"]) == ("book_visit", "refused")
    assert "take a message instead" in answer["reply"]
    assert ran == []


async def test_put_through_only_past_the_screening_gate(line):
    await line.api.post("/api/conflict-names", headers=line.owner,
                        json={"names": "Robert Dole"})
    talk = Talk(line, line.owner)
    held = await talk.say("Can you put me through to a person please")
    assert held["ended"] is None and held["transfer_to"] is None
    assert "full name" in held["reply"]
    cleared = await talk.say("My name is Jane Smith")
    assert cleared["ended"] == "transferred" and cleared["transfer_to"] == "+441632960999"
    ended = await talk.say("hello?", status=409)
    assert ended["error"]["code"] == "conversation_ended"


async def test_a_goodbye_ends_the_conversation(line):
    talk = Talk(line, line.owner)
    answer = await talk.say("thank you goodbye")
    assert answer["ended"] == "completed" and answer["tool_calls"][0]["name"] == "end_call"
    assert (await talk.say("one more thing", status=409))["error"]["code"] == (
        "conversation_ended")


async def test_one_turn_at_a_time(line):
    from app import db

    talk = Talk(line, line.owner)
    await talk.say("hello")
    async with db.connection() as connection:  # as while another turn is answered
        await connection.execute("UPDATE line_conversation SET busy_until = now() + "
                                 "interval '1 minute'")
    said = await ChatMessage.count()
    busy = await talk.say("are you there", status=409)
    assert busy["error"]["code"] == "conversation_busy"
    assert await ChatMessage.count() == said  # the refused turn reached no one


async def test_an_administrator_may_talk_to_any_line(line, api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    answer = await Talk(line, admin).say("I'd like to book an appointment")
    assert answer["reply"] == "What day and time would suit you?"
    # The agent answers for the line's account, whoever types.
    [chat] = await Chat.select().where(Chat.id == answer["chat_id"])
    assert str(chat["owner_id"]) == line.owner_id and chat["source"] == "telephone"


async def test_anyone_else_gets_404_and_nothing_is_written(line, api, services):
    stranger = await api.as_new_user(services, "stranger@example.org")
    chats_before = await Chat.count()
    for headers in (stranger, line.manager):  # managing lines is not owning one
        refused = await Talk(line, headers).say("hello", status=404)
        assert refused["error"]["code"] == "not_found"
    owners = Talk(line, line.owner)
    await owners.say("hello")
    # Another's conversation is not there either, even on a line one may talk to.
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    theirs = Talk(line, admin)
    theirs.conversation_id = owners.conversation_id
    await theirs.say("hello", status=404)
    assert await Chat.count() == chats_before + 1
    assert await AuditEntry.count().where(AuditEntry.kind == "telephony.line.talked") == 1


async def test_a_disabled_line_is_refused_like_a_call(line):
    await line.patch_line(enabled=False)
    refused = await Talk(line, line.owner).say("hello", status=409)
    assert refused["error"]["code"] == "line_disabled"
    assert await Chat.count() == 0
    assert await AuditEntry.count().where(AuditEntry.kind == "telephony.line.talked") == 0


async def test_a_line_whose_account_has_no_telephone_is_refused(line):
    await line.setting("features.telephony", False)
    refused = await Talk(line, line.owner).say("hello", status=409)
    assert refused["error"]["code"] == "telephony_off"


@pytest.mark.parametrize("body, field", [
    ({"text": "   "}, "text"),
    ({"text": "x" * 2001}, "text"),
    ({"text": 7}, "text"),
    ({"text": "hello", "conversation_id": "not-an-id"}, "conversation_id"),
    ({"text": "hello", "extra": 1}, "extra"),
])
async def test_bad_turns_are_refused_and_change_nothing(line, body, field):
    response = await line.api.post(f"/api/lines/{line.line['id']}/conversation",
                                   headers=line.owner, json=body)
    assert response.status_code in (404, 422), response.text
    assert response.json()["error"].get("field") == field
    assert await Chat.count() == 0
