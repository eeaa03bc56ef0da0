"""Whole calls, rung by the call simulator over both transports against one running
server: the carrier's webhooks and media WebSocket, the dialplan's questions and the
AudioSocket listener, the voice session, the agent (the built-in ``local`` model) and
the call log — only the speech engines are fakes (``tests.fakes.coded_speech``), which
answer at once and whose tones read back as text, so what the caller heard can be
compared word for word with what the agent said.

One server for the module: set up once, restarted once so that it binds the listen
address (spec: telephony.md "Setup: own-telephone-system transport", step 4). Each
test rings from its own number, so the per-number limit never interferes.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import aiohttp
import pytest
import soundfile

from adapters.call_simulator import (
    AwaitHangup,
    AwaitSpeech,
    Caller,
    FutureEvent,
    GoSilent,
    Listen,
    Pause,
    Press,
    Say,
    prepare,
    ring_carrier,
    ring_pbx,
    transcribe,
)
from app.tables import TelephonyCall, UsageEvent
from tests.app.telephony.deployment import (
    CREDENTIAL,
    PUBLIC,
    SHARED_SECRET,
    Deployment,
    deployment,
)
from tests.fakes.coded_speech import CodedRecogniser, CodedSynthesiser, normalise
from tests.support.http import ApiClient, running_app
from tests.support.listener import free_port

if TYPE_CHECKING:
    from app.bundle import Services

pytestmark = pytest.mark.anyio

NOTICE = "A computer answers this line and staff may read what you say. How can I help?"
GREETING = "Hello."
CARRIER_LINE = "+441632960001"
PBX_LINE = "+441632960002"
TRANSFER = "+441632960999"
HOURS = ("Our opening hours are nine to five on weekdays. "
         "The surgery is closed at weekends and on public holidays.")
LONG_ANSWER = ("Parking is free behind the building for two hours. "
               "Parking spaces near the door are kept for people who need them. "
               "Parking on the street outside is limited to thirty minutes.")
_callers = itertools.count(100)


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@dataclass(eq=False)
class Line:
    """The running server and what the tests need to ring it and look inside."""

    services: Services
    client: ApiClient
    setup: Deployment
    synthesiser: CodedSynthesiser
    recogniser: CodedRecogniser
    audiosocket: tuple[str, int]
    last_caller: str = field(default="", init=False)

    async def ring(self, via: str, steps, *, rate: int = 8000) -> object:
        caller = Caller(await prepare(steps, CodedSynthesiser()))
        number = self.last_caller = f"+4479460{next(_callers):05d}"
        async with aiohttp.ClientSession() as http:
            if via == "pbx":
                report = await ring_pbx(server_url=str(self.client.base_url),
                                        audiosocket=self.audiosocket, secret=SHARED_SECRET,
                                        caller_number=number, dialled=PBX_LINE,
                                        caller=caller, http=http, rate=rate)
            else:
                report = await ring_carrier(server_url=str(self.client.base_url),
                                            public_base=PUBLIC, credential=CREDENTIAL,
                                            caller_number=number, dialled=CARRIER_LINE,
                                            caller=caller, http=http)
        await transcribe(report, CodedRecogniser())
        return report

    async def call_row(self) -> dict:
        """The call rung last."""
        rows = await TelephonyCall.select().where(
            TelephonyCall.from_number == self.last_caller)
        assert len(rows) == 1, rows
        return rows[0]

    async def conversation(self, call: dict) -> list[dict]:
        chat = await self.client.get(f"/api/chats/{call['chat_id']}", headers=self.setup.owner)
        assert chat.status_code == 200, chat.text
        return chat.json()["messages"]


@pytest.fixture(scope="module")
async def line(postgres, tmp_path_factory):
    from app import db
    from app.bundle import Services
    from app.config import BootConfig
    from app.telephony.speech_engines import CallEngines

    dsn = await postgres.clone_template(f"svc_e2e_calls_{os.getpid()}")
    db.use_database(dsn)
    await db.open_pool(max_size=10)
    data = tmp_path_factory.mktemp("calls")
    services = Services.build(BootConfig({
        "storage.data_dir": str(data), "storage.recordings_dir": str(data / "recordings"),
        "message_encryption_key": os.urandom(32).hex(), "server.public_url": PUBLIC}))
    services.settings.cache_seconds = 0
    synthesiser, recogniser = CodedSynthesiser(), CodedRecogniser()

    async def instant_engines() -> CallEngines:
        return CallEngines(synthesiser=synthesiser, recogniser=recogniser)

    services.call_voice.engines = instant_engines
    audiosocket = ("127.0.0.1", free_port())
    try:
        async with running_app(services) as client:
            setup = await deployment(client, services, provider="pbx", line_provider="carrier")
            await _configure(client, services, setup, audiosocket)
        # A restart binds the listen address set above.
        async with running_app(services) as client:
            yield Line(services, client, setup, synthesiser, recogniser, audiosocket)
    finally:
        await services.aclose()
        await db.close_pool()
        await postgres.drop(f"svc_e2e_calls_{os.getpid()}")


async def _configure(client, services, setup, audiosocket) -> None:
    settings = await client.put("/api/admin/telephony", headers=setup.admin,
                                json={"pbx_listen": "%s:%d" % audiosocket})
    assert settings.status_code == 200, settings.text
    await setup.setting("telephony.max_concurrent_calls", 20)
    await setup.setting("voice.phone.turn_detection", False)
    await setup.patch_line(greeting=GREETING, notice=NOTICE)
    pbx = await client.post("/api/admin/telephony/numbers", headers=setup.admin, json={
        "e164": PBX_LINE, "agent_id": setup.agent_id, "owner_user_id": setup.owner_id,
        "provider": "pbx", "greeting": GREETING, "notice": NOTICE, "transfer_e164": TRANSFER,
        "record_calls": True, "recording_days": 30})
    assert pbx.status_code == 201, pbx.text
    enabled = await client.patch(f"/api/admin/telephony/numbers/{pbx.json()['id']}",
                                 headers=setup.manager, json={"enabled": True})
    assert enabled.status_code == 200, enabled.text
    library = await client.post("/api/libraries", headers=setup.owner,
                                json={"name": "Front desk"})
    assert library.status_code == 201, library.text
    for title, content in (("Hours", HOURS), ("Parking", LONG_ANSWER)):
        added = await client.post(f"/api/libraries/{library.json()['id']}/documents",
                                  headers=setup.owner,
                                  json={"title": title, "media_type": "text/plain",
                                        "content": content})
        assert added.status_code in (200, 201), added.text

    from core.pipeline import ToolSpec

    async def book_visit(arguments):
        raise AssertionError("a refused tool must not run")

    services.tools.register(ToolSpec("book_visit", "Books a visit.", side_effecting=True),
                            book_visit)
    agent = await client.patch(f"/api/agents/{setup.agent_id}", headers=setup.owner, json={
        "library_ids": [library.json()["id"]], "tools": _agent_tools(services)})
    assert agent.status_code == 200, agent.text


def _agent_tools(services) -> list[str]:
    """The refusable tool, and the built-in put-through tool of calls."""
    names = ["book_visit"]
    names += [spec.name for spec in services.tools.builtin_specs()
              if "put" in spec.name or "transfer" in spec.name]
    return names


def _opening(recording: bool) -> str:
    from core.voice import compose_opening

    return normalise(compose_opening(GREETING, NOTICE, recording=recording))


@pytest.mark.parametrize("via", ["carrier", "pbx"])
async def test_the_opening_is_heard_whole_and_speech_over_it_is_ignored(line, via):
    report = await line.ring(via, [Say("hello hello is anybody there"),
                                   Listen(quiet_ms=1500, timeout_s=30)])
    assert report.answered and report.ended_by == "caller", report
    assert [reply.transcript for reply in report.replies] == [_opening(via == "pbx")]
    call = await line.call_row()
    # The transcript holds the opening, as the line said it, and nothing the caller
    # said over it.
    said = [(m["role"], normalise(m["content"])) for m in await line.conversation(call)]
    assert said == [("assistant", _opening(via == "pbx"))]


@pytest.mark.parametrize("via", ["carrier", "pbx"])
async def test_a_question_is_answered_from_the_agents_library(line, via):
    report = await line.ring(via, [Listen(quiet_ms=1200), Say("what are your opening hours"),
                                   Listen(quiet_ms=1500)])
    assert len(report.replies) == 2, report
    answer = report.replies[1].transcript
    assert "our opening hours are nine to five on weekdays" in answer
    assert report.timings[0].latency_ms is not None
    call = await line.call_row()
    said = [m["content"] for m in await line.conversation(call) if m["role"] == "assistant"]
    assert normalise(said[0]) == _opening(via == "pbx")
    assert normalise(said[1]).startswith(answer[:40])
    # The answered turn is timed, and its usage counts from the end of the caller's
    # speech: past the moment the agent was asked.
    view = (await line.client.get(f"/api/admin/telephony/calls/{call['id']}",
                                  headers=line.setup.manager)).json()
    [timed] = view["turns"]
    assert timed["first_audio_s"] is not None and timed["finished_s"] >= timed["first_audio_s"]
    await line.services.usage.drain()
    used = await UsageEvent.select().where(UsageEvent.line_id == call["number_id"])
    assert used and max(row["latency_ms"] for row in used) >= timed["asked_s"] * 1000
    if via == "carrier":
        return  # only the pbx number records its calls
    recording = os.path.join(line.services.boot["storage.recordings_dir"], f"{call['id']}.wav")
    info = soundfile.info(recording)
    assert (info.channels, info.samplerate, info.subtype) == (2, 8000, "ULAW")
    assert info.duration > 3


@pytest.mark.parametrize("via", ["carrier", "pbx"])
async def test_barge_in_stops_playback(line, via):
    report = await line.ring(via, [Listen(quiet_ms=1200), Say("where can i park"),
                                   AwaitSpeech(), Pause(ms=1500),
                                   Say("sorry stop there"), Listen(quiet_ms=1500)])
    # The carrier is told to drop what it holds; Asterisk plays only what it is sent,
    # so there the answer simply stops.
    if via == "carrier":
        assert report.clears >= 1
    full = normalise(LONG_ANSWER)
    heard = report.replies[1].transcript
    assert heard and full.startswith(heard[:20]) and len(heard) < len(full) // 2, heard


async def test_a_refused_tool_is_spoken_as_a_refusal(line):
    report = await line.ring("pbx", [Listen(quiet_ms=1200), Say("i would like to book a visit"),
                                     Listen(quiet_ms=1500)])
    assert "i can take a message instead" in report.replies[1].transcript


@pytest.mark.parametrize("via", ["carrier", "pbx"])
async def test_a_transfer_yields_the_number(line, via):
    report = await line.ring(via, [Listen(quiet_ms=1200),
                                   Say("put me through to a person please"),
                                   AwaitHangup(timeout_s=20)])
    assert report.ended_by == "line" and report.transfer_to == TRANSFER, report
    assert (await line.call_row())["outcome"] == "transferred"


async def test_notice_failed_when_synthesis_is_down(line):
    line.synthesiser.available = False
    try:
        report = await line.ring("carrier", [AwaitHangup(timeout_s=10)])
    finally:
        line.synthesiser.available = True
    assert report.ended_by == "line" and report.replies == []
    assert (await line.call_row())["outcome"] == "notice_failed"


async def test_the_peer_going_silent_ends_the_call(line):
    report = await line.ring("pbx", [Listen(quiet_ms=1200), GoSilent(timeout_s=15)])
    assert report.ended_by == "line"
    assert (await line.call_row())["outcome"] == "dropped"


@pytest.mark.parametrize("via", ["carrier", "pbx"])
async def test_keys_pressed_reach_the_agent_and_the_transcript(line, via):
    report = await line.ring(via, [Listen(quiet_ms=1200), *(Press(key) for key in "4711#"),
                                   Listen(quiet_ms=1500, timeout_s=10)])
    assert report.ended_by == "caller" and len(report.replies) == 2, report
    call = await line.call_row()
    said = [(m["role"], m["content"]) for m in await line.conversation(call)]
    assert said[0][0] == "assistant"  # the opening
    assert said[1] == ("user", "Digits pressed: 4711")
    assert said[2][0] == "assistant"


async def test_an_event_the_carrier_adds_later_changes_nothing(line):
    report = await line.ring("carrier", [Listen(quiet_ms=1200), FutureEvent("heartbeat"),
                                         Say("what are your opening hours"),
                                         Listen(quiet_ms=1500)])
    assert report.ended_by == "caller" and report.fault is None, report
    assert "our opening hours are nine to five" in report.replies[1].transcript


async def test_asterisks_channel_driver_at_slin16_is_answered_in_slin16(line):
    report = await line.ring("pbx", [Listen(quiet_ms=1200), Say("what are your opening hours"),
                                     Listen(quiet_ms=1500)], rate=16000)
    assert report.ended_by == "caller" and report.fault is None, report
    assert report.rates == {16000} and report.odd_frames == 0
    assert report.replies[0].transcript == _opening(True)
    assert "our opening hours are nine to five" in report.replies[1].transcript


@pytest.mark.parametrize("via", ["carrier", "pbx"])
async def test_a_goodbye_ends_the_call_after_the_farewell_is_heard(line, via):
    report = await line.ring(via, [Listen(quiet_ms=1200), Say("thank you goodbye"),
                                   AwaitHangup(timeout_s=20)])
    assert report.ended_by == "line" and report.transfer_to is None, report
    farewell = report.replies[-1].transcript  # the whole farewell, to its last word
    assert farewell.startswith("thank you for calling") and farewell.endswith("goodbye."), farewell
    assert (await line.call_row())["outcome"] == "completed"


async def test_a_quiet_agent_keeps_asterisk_from_giving_up(line):
    # Asterisk hangs up after 2 s without audio; the caller thinks for 3 s here.
    report = await line.ring("pbx", [Listen(quiet_ms=3000, timeout_s=10),
                                     Say("what are your opening hours"), Listen(quiet_ms=1500)])
    assert report.ended_by == "caller", report
    assert "our opening hours are nine to five" in report.replies[1].transcript
