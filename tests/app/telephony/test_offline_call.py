"""A whole call on a fresh installation with nothing but the offline engines: eSpeak NG
speaks for the line, PocketSphinx listens with the line's own language model, and the
built-in ``local`` model holds the conversation.

The simulated caller is eSpeak NG too, in the voice ``svc call simulate`` gives it (a
female US one; the line speaks the default English voice). It asks a question the agent's Library answers,
books "tomorrow at ten", gives a name, confirms and says goodbye, over the pbx
transport. Nothing is faked but the caller: the recognition is as imperfect as it is
for a real caller, so the phrasing is what a caller would naturally say.
"""

from __future__ import annotations

import datetime as dt
import os
import zoneinfo

import aiohttp
import pytest

from adapters.call_simulator import AwaitHangup, Caller, Listen, Say, prepare, ring_pbx
from app.cli import CALLER_VOICE
from app.tables import Appointment, TelephonyCall
from tests.support.listener import free_port
from tests.app.telephony.deployment import LINE_NUMBER as LINE
from tests.app.telephony.deployment import SHARED_SECRET, deployment
from tests.support.fresh_voice import Recorded, fresh_speech
from tests.support.http import running_app

pytest.importorskip("espeakng_loader")
pytest.importorskip("pocketsphinx")
pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CALLER = "+447700900123"
ZONE = "Europe/London"
PARKING = "Parking is free in the car park behind the building for two hours."
CALL_TOOLS = ["offer_times", "book_appointment", "change_appointment", "cancel_appointment",
              "take_message", "put_through"]
EVERY_DAY = [{"weekday": day, "opens_minute": 540, "closes_minute": 1020} for day in range(7)]


@pytest.fixture
async def offline_line(postgres, tmp_path):
    """A fresh deployment: local synthesis and recognition, one pbx line whose agent
    has a Library and a diary open every day; restarted once to bind the listener."""
    from app import db
    from app.config import BootConfig
    from app.bundle import Services

    name = f"svc_offline_call_{os.getpid()}"
    db.use_database(await postgres.clone_template(name))
    await db.open_pool(max_size=10)
    services = Services.build(BootConfig({
        "storage.data_dir": str(tmp_path), "storage.recordings_dir": str(tmp_path / "rec"),
        "message_encryption_key": os.urandom(32).hex()}))
    services.settings.cache_seconds = 0
    audiosocket = ("127.0.0.1", free_port())
    try:
        async with running_app(services) as client:
            setup = await deployment(client, services, provider="pbx", line_provider="pbx")
            await _configure(client, setup, audiosocket)
        # What the server's refresh would build within its first pass, built now.
        assert await services.speech_models.build(setup.agent_id) is not None
        async with running_app(services) as client:
            yield client, setup, audiosocket
    finally:
        await services.aclose()
        await db.close_pool()
        await postgres.drop(name)


async def _configure(client, setup, audiosocket) -> None:
    settings = await client.put("/api/admin/telephony", headers=setup.admin,
                                json={"pbx_listen": "%s:%d" % audiosocket})
    assert settings.status_code == 200, settings.text
    await setup.setting("voice_live.stt_url", "local")
    await setup.setting("voice.phone.turn_detection", False)
    await setup.patch_line(greeting="Hello, Hillside Surgery.")
    diary = await client.put("/api/diary", headers=setup.owner, json={
        "timezone": ZONE, "slot_minutes": 30, "lead_minutes": 60, "horizon_days": 30,
        "enabled": True, "hours": EVERY_DAY})
    assert diary.status_code == 200, diary.text
    library = await client.post("/api/libraries", headers=setup.owner,
                                json={"name": "Front desk"})
    assert library.status_code == 201, library.text
    added = await client.post(f"/api/libraries/{library.json()['id']}/documents",
                              headers=setup.owner, json={"title": "Parking",
                                                         "media_type": "text/plain",
                                                         "content": PARKING})
    assert added.status_code in (200, 201), added.text
    agent = await client.patch(f"/api/agents/{setup.agent_id}", headers=setup.owner, json={
        "instructions": "You are the receptionist of Hillside Surgery.",
        "library_ids": [library.json()["id"]], "tools": CALL_TOOLS})
    assert agent.status_code == 200, agent.text


async def test_a_caller_asks_books_tomorrow_at_ten_and_says_goodbye(offline_line):
    client, setup, audiosocket = offline_line
    # The caller waits for 2.5 s of quiet before speaking again: a reply's sentences
    # are synthesised one by one, and on a busy machine the gap between two can pass
    # a second, when a caller who spoke into it would be heard over the agent.
    script = [Listen(quiet_ms=2500),
              Say("Is parking free?"), Listen(quiet_ms=2500),
              Say("I'd like to book an appointment for tomorrow at ten."), Listen(quiet_ms=2500),
              Say("It's Peter Taylor."), Listen(quiet_ms=2500),
              Say("Yes please."), Listen(quiet_ms=2500),
              Say("Thank you, goodbye."), AwaitHangup(timeout_s=30)]
    said_by_caller = [step.text for step in script if isinstance(step, Say)]
    voice = Recorded(await fresh_speech(said_by_caller, CALLER_VOICE))
    caller = Caller(await prepare(script, voice))
    async with aiohttp.ClientSession() as http:
        report = await ring_pbx(server_url=str(client.base_url), audiosocket=audiosocket,
                                secret=SHARED_SECRET, caller_number=CALLER, dialled=LINE,
                                caller=caller, http=http)
    [call] = await TelephonyCall.select().where(TelephonyCall.from_number == CALLER)
    chat = await client.get(f"/api/chats/{call['chat_id']}", headers=setup.owner)
    said = [(m["role"], m["content"]) for m in chat.json()["messages"]]
    # The whole transcript, one line a turn, so a failure shows what was misheard.
    transcript = "\n".join(f"{role}: {content}" for role, content in said)
    assert report.answered and report.ended_by == "line", (report, transcript)
    assert call["outcome"] == "completed", transcript
    opening, *answers = [content for role, content in said if role == "assistant"]
    assert opening.startswith("Hello, Hillside Surgery."), transcript
    assert "behind the building" in answers[0], transcript
    booked = await Appointment.select()
    assert len(booked) == 1, transcript
    [booked] = booked
    zone = zoneinfo.ZoneInfo(ZONE)
    tomorrow = booked["created_at"].astimezone(zone).date() + dt.timedelta(days=1)
    assert booked["starts_at"].astimezone(zone) == dt.datetime.combine(
        tomorrow, dt.time(10, 0), tzinfo=zone), transcript
    assert booked["call_id"] == call["id"] and booked["caller_number"] == CALLER
