"""Announcing (spec: telephony.md "Line" — ``deliver_group_chat_id``): each ended call of
a line that announces posts one entry into the line's chat — who called, when, the
outcome, the messages taken and appointments booked, a link to the call's page — and
nothing when the call's transcript is not kept or once announcing is cleared."""

from __future__ import annotations

import uuid

import pytest

from app import db
from app.tables import Chat, ChatMessage, TelephonyCall
from tests.app.telephony.deployment import LINE_NUMBER, carrier_post, deployment, voice_params
from tests.app.telephony.test_telephony_carrier import ticket_of

pytestmark = pytest.mark.anyio

VOICE = "/api/telephony/carrier/voice"
STATUS = "/api/telephony/carrier/status"
PUBLIC_URL = "http://127.0.0.1:8080"  # the boot fixture's server.public_url


class Line:
    def __init__(self, api, services, setup) -> None:
        self.api, self.services, self.setup = api, services, setup

    async def call(self, sid: str, caller: str, *, transcript: bool = True) -> uuid.UUID:
        """A call taken, its audio started, and (``transcript``) its conversation open."""
        answered = await carrier_post(self.api, VOICE, voice_params(caller=caller, call_sid=sid))
        redeemed = await self.services.telephony.redeem(ticket_of(answered.content))
        if transcript:
            chat = Chat(owner_id=self.setup.owner_id, agent_id=self.setup.agent_id,
                        source="telephone", title=f"Call from {caller}")
            await chat.save()
            await TelephonyCall.update({TelephonyCall.chat_id: chat.id}).where(
                TelephonyCall.id == redeemed.call_id)
        return redeemed.call_id

    async def hang_up(self, sid: str) -> None:
        await carrier_post(self.api, STATUS, {"CallSid": sid, "CallStatus": "completed"})


@pytest.fixture
async def line(api, services):
    setup = await deployment(api, services)
    await setup.setting("telephony.max_concurrent_calls", 10)
    return Line(api, services, setup)


async def announcing_chat(line: Line) -> uuid.UUID:
    group = Chat(owner_id=line.setup.owner_id, agent_id=line.setup.agent_id, title="Desk")
    await group.save()
    await line.setup.patch_line(deliver_group_chat_id=str(group.id))
    return group.id


async def posted(chat_id: uuid.UUID) -> list[dict]:
    return await ChatMessage.select().where(ChatMessage.chat_id == chat_id).order_by(
        ChatMessage.id)


async def test_an_ended_call_is_announced_with_what_was_taken_and_a_link(line):
    group = await announcing_chat(line)
    call_id = await line.call("CA1", "+447700900501")
    owner = line.setup.owner_id
    async with db.connection() as connection:
        await connection.execute(
            "INSERT INTO enquiry (account_id, call_id, caller_number, caller_name, subject, "
            "message) VALUES ($1, $2, '+447700900501', 'Jane Smith', 'Lease', "
            "'Please call me back')", owner, call_id)
        await connection.execute(
            "INSERT INTO appointment (account_id, reference, starts_at, ends_at, caller_name, "
            "subject, call_id) VALUES ($1, 'K7Q2', '2026-12-01 10:00+00', "
            "'2026-12-01 10:30+00', 'Jane Smith', 'Viewing', $2)", owner, call_id)
    assert await posted(group) == []  # nothing while the call is in progress
    await line.hang_up("CA1")

    [entry] = await posted(group)
    started = (await TelephonyCall.select().where(TelephonyCall.id == call_id).first())[
        "started_at"]
    assert entry["content"].split("\n") == [
        f"Call from +447700900501 to {LINE_NUMBER} at "
        f"{started.strftime('%Y-%m-%d %H:%M')} UTC: completed.",
        "Message taken from Jane Smith: Lease — Please call me back",
        "Appointment booked: K7Q2, 2026-12-01 10:00 UTC, Jane Smith — Viewing",
        f"{PUBLIC_URL}/calls/{call_id}"]
    await line.hang_up("CA1")  # a late echo of the end posts nothing more
    assert len(await posted(group)) == 1


async def test_a_call_ended_by_the_lease_sweep_is_announced_dropped(line):
    group = await announcing_chat(line)
    call_id = await line.call("CA1", "anonymous")
    await TelephonyCall.update({TelephonyCall.owner_instance: uuid.uuid4()}).where(
        TelephonyCall.id == call_id)  # a process that is gone
    await line.services.telephony.leases.end_orphans()  # (or the beat got there first)
    assert (await TelephonyCall.select().where(TelephonyCall.id == call_id).first())[
        "outcome"] == "dropped"
    [entry] = await posted(group)
    assert entry["content"].startswith("Call from number withheld to ")
    assert ": dropped.\n" in entry["content"]


async def test_nothing_is_posted_when_the_transcript_is_not_kept(line):
    group = await announcing_chat(line)
    await line.call("CA1", "+447700900502", transcript=False)
    await line.hang_up("CA1")
    tidied = await line.call("CA2", "+447700900503")
    await TelephonyCall.update({TelephonyCall.chat_id: None,
                                TelephonyCall.tidied_at: TelephonyCall.started_at}).where(
        TelephonyCall.id == tidied)
    await line.hang_up("CA2")
    assert await posted(group) == []


async def test_a_null_stops_announcing(line):
    group = await announcing_chat(line)
    await line.setup.patch_line(deliver_group_chat_id=None)
    await line.call("CA1", "+447700900504")
    await line.hang_up("CA1")
    assert await posted(group) == []
