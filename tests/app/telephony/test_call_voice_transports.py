"""A call's voice over the two real transports, against the server started in the test:
the AudioSocket listener bound at start and the carrier's media WebSocket, with
instant fake speech engines and the built-in local model (spec: telephony.md "Pbx
ticket", "Opening of every call", "Call outcome", "Limits"; DESIGN.md "Carrier",
"Pbx"). The fuller end-to-end suite runs the call simulator."""

from __future__ import annotations

import base64
import contextlib
import json
import struct
import uuid

import anyio
import pytest
import websockets
from websockets.asyncio.client import connect as ws_connect

from adapters.voice.audiosocket import UNIDENTIFIED_AT_ONCE, UNIDENTIFIED_PER_SOURCE
from app.tables import Chat, ChatMessage, TelephonyCall
from app.telephony.audio_listener import AudioListener
from tests.app.telephony.deployment import (
    CALLER,
    LINE_NUMBER,
    SHARED_SECRET,
    carrier_post,
    deployment,
    voice_params,
)
from tests.fakes.voice import SPEECH_MS_PER_CHAR, Caller, FakeEngines, FakeSynthesiser
from tests.support.http import running_app
from tests.support.listener import free_port

pytestmark = pytest.mark.anyio

HEADER = struct.Struct(">BH")
KEY = {"x-service-telephony-key": SHARED_SECRET}
QUICK_DIALS = {"voice.phone.silence_threshold_ms": 300, "voice.phone.min_speech_ms": 100,
               "voice.phone.turn_detection": False, "voice.phone.barge_min_ms": 100}


async def voice_deployment(api, services, *, provider: str, engines: FakeEngines):
    found = await deployment(api, services, provider=provider, line_provider=provider)
    await found.patch_line(notice="Hello caller.")
    for key, value in QUICK_DIALS.items():
        await found.setting(key, value)

    async def fake_engines():
        return engines

    services.call_voice.engines = fake_engines
    return found


def frames_of(data: bytes) -> list[tuple[int, bytes]]:
    """AudioSocket frames in ``data`` (which must hold whole frames)."""
    frames, offset = [], 0
    while offset < len(data):
        kind, length = HEADER.unpack_from(data, offset)
        frames.append((kind, data[offset + 3:offset + 3 + length]))
        offset += 3 + length
    assert offset == len(data)
    return frames


class Asterisk:
    """Asterisk's side of one AudioSocket call over a real TCP connection."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.received = bytearray()
        self.caller = Caller(self.send_audio)
        self.closed = anyio.Event()
        self._writing = anyio.Lock()

    async def send_audio(self, pcm: bytes) -> None:
        await self.send(HEADER.pack(0x10, len(pcm)) + pcm)

    async def send(self, frame: bytes) -> None:
        async with self._writing:
            await self.stream.send(frame)

    async def read(self) -> None:
        try:
            while True:
                self.received += await self.stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            self.closed.set()

    def frames(self) -> list[tuple[int, bytes]]:
        whole = bytes(self.received)
        return frames_of(whole[:_whole_length(whole)])


def _whole_length(data: bytes) -> int:
    offset = 0
    while offset + 3 <= len(data):
        _, length = HEADER.unpack_from(data, offset)
        if offset + 3 + length > len(data):
            break
        offset += 3 + length
    return offset


async def pbx_answer(api) -> str:
    response = await api.get("/api/telephony/pbx/answer", headers=KEY,
                             params={"from": CALLER, "to": LINE_NUMBER})
    assert response.status_code == 200 and response.text
    return response.text


async def set_listen_address(found) -> str:
    address = f"127.0.0.1:{free_port()}"
    response = await found.api.put("/api/admin/telephony", headers=found.admin,
                                   json={"pbx_listen": address})
    assert response.status_code == 200, response.text
    return address


@contextlib.asynccontextmanager
async def listening(found):
    """The listener as the application starts it, on a free loopback port; yields the
    host and port, and stops it afterwards."""
    address = await set_listen_address(found)
    services = found.services
    listener = AudioListener(services.settings, services.telephony.listener,
                             services.call_voice)
    await listener.start()
    try:
        host, port = address.split(":")
        yield host, int(port)
    finally:
        await listener.stop()


async def dial_in(host: str, port: int, identifier: str | None = None):
    """An AudioSocket connection presenting ``identifier`` (an unknown one when None)."""
    stream = await anyio.connect_tcp(host, port)
    call_id = uuid.UUID(identifier) if identifier else uuid.uuid4()
    await stream.send(HEADER.pack(0x01, 16) + call_id.bytes)
    return stream


async def heard_until_closed(found, seconds: float) -> tuple[str, "Asterisk"]:
    """A pbx call that only listens, until our side closes it (within ``seconds``);
    its identifier, and what it heard."""
    async with listening(found) as (host, port):
        identifier = await pbx_answer(found.api)
        with anyio.fail_after(seconds):
            async with await dial_in(host, port, identifier) as stream:
                asterisk = Asterisk(stream)
                await asterisk.read()
    return identifier, asterisk


def frames_for(text: str) -> int:
    """Frames the fake synthesiser's audio for ``text`` fills at 8 kHz."""
    return -(-len(text) * SPEECH_MS_PER_CHAR // 20)


async def one_question(host: str, port: int, identifier: str, engines: FakeEngines, *,
                       hang_up: bool, opening: str = "Hello caller.") -> Asterisk:
    """A pbx call: the opening played whole, one question, its answer played; then the
    caller hangs up (``hang_up``) or waits a few seconds for our side to end."""
    with anyio.fail_after(30):
        async with await dial_in(host, port, identifier) as stream:
            asterisk = Asterisk(stream)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(asterisk.read)
                tasks.start_soon(asterisk.caller.run)
                while len(asterisk.frames()) < frames_for(opening):
                    await anyio.sleep(0.05)
                await anyio.sleep(0.3)
                await asterisk.caller.say(0.4)  # the question
                while len(engines.synthesiser.spoken) < 2 and not asterisk.closed.is_set():
                    await anyio.sleep(0.05)
                if hang_up:
                    await anyio.sleep(0.5)
                    asterisk.caller.silent = True
                    await asterisk.send(HEADER.pack(0x00, 0))
                with anyio.move_on_after(4):
                    await asterisk.closed.wait()
                asterisk.caller.silent = True
                tasks.cancel_scope.cancel()
    return asterisk


async def test_pbx_call_over_the_listener_bound_at_start(api, services):
    engines = FakeEngines()
    found = await voice_deployment(api, services, provider="pbx", engines=engines)
    address = await set_listen_address(found)
    async with running_app(services):  # a process started now binds the address
        assert services.telephony.listener.listening_on(address)
        host, port = address.split(":")
        asterisk = await one_question(host, int(port), await pbx_answer(api), engines,
                                      hang_up=True)
        assert asterisk.closed.is_set()
    assert not services.telephony.listener.listening
    # We sent only 320-byte audio frames: none empty, no error frame, no hangup (the
    # caller hung up first).
    frames = asterisk.frames()
    assert frames and all(kind == 0x10 and len(payload) == 320 for kind, payload in frames)
    assert engines.synthesiser.spoken[0] == "Hello caller."
    call = await TelephonyCall.select().first()
    assert call["outcome"] == "completed"
    chat = await Chat.select().where(Chat.id == call["chat_id"]).first()
    assert chat["source"] == "telephone" and str(chat["owner_id"]) == found.owner_id
    messages = await ChatMessage.select().where(ChatMessage.chat_id == chat["id"]).order_by(
        ChatMessage.id)
    # The opening the line said, the caller's turn, the answer.
    assert [m["role"] for m in messages] == ["assistant", "user", "assistant"]
    assert messages[0]["content"] == engines.synthesiser.spoken[0]
    assert messages[1]["content"] == "hello"


async def closed_without_a_word(stream) -> None:
    with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
        await stream.receive()


async def test_pbx_connection_without_a_valid_identifier_is_closed_without_a_word(api, services):
    found = await voice_deployment(api, services, provider="pbx", engines=FakeEngines())
    async with listening(found) as (host, port):
        with anyio.fail_after(10):
            async with await dial_in(host, port) as stream:  # an unknown identifier
                await closed_without_a_word(stream)
            async with await anyio.connect_tcp(host, port) as stream:
                await stream.send(HEADER.pack(0x10, 320) + bytes(320))  # audio first
                await closed_without_a_word(stream)
            identifier = await pbx_answer(api)  # a used identifier
            assert await services.call_voice.redeem(identifier) is not None
            async with await dial_in(host, port, identifier) as stream:
                await closed_without_a_word(stream)
            identifier = await pbx_answer(api)  # a valid one, once the surface is dormant
            await found.setting("features.telephony", False)
            async with await dial_in(host, port, identifier) as stream:
                await closed_without_a_word(stream)
    await found.setting("features.telephony", True)
    assert await services.call_voice.redeem(identifier) is not None  # it was never used


async def test_pbx_connection_silent_for_five_seconds_before_its_identifier_is_closed(
        api, services):
    found = await voice_deployment(api, services, provider="pbx", engines=FakeEngines())
    async with listening(found) as (host, port):
        with anyio.fail_after(10):
            async with await anyio.connect_tcp(host, port) as stream:
                await closed_without_a_word(stream)


async def test_connections_that_never_introduce_themselves_are_held_only_so_many(
        api, services, monkeypatch):
    # A stranger who reaches the listen address opens connections and never sends the
    # identifier. Each waits for it (here for an hour, so only the bound can close it),
    # but only so many at once: from one address, and from everywhere together.
    monkeypatch.setattr("adapters.voice.audiosocket.IDENTIFY_SECONDS", 3600.0)
    engines = FakeEngines()
    found = await voice_deployment(api, services, provider="pbx", engines=engines)
    async with listening(found) as (host, port), contextlib.AsyncExitStack() as held:

        async def hold(source: str):
            stream = await anyio.connect_tcp(host, port, local_host=source)
            await held.enter_async_context(stream)
            await stream.send(b"\x01")  # a kind, and never the rest of the frame
            return stream

        with anyio.fail_after(30):
            waiting = [await hold("127.0.0.2") for _ in range(UNIDENTIFIED_PER_SOURCE)]
            await closed_without_a_word(await hold("127.0.0.2"))
            sources = -(-UNIDENTIFIED_AT_ONCE // UNIDENTIFIED_PER_SOURCE)
            for n in range(3, 3 + sources):
                left = UNIDENTIFIED_AT_ONCE - len(waiting)
                waiting += [await hold(f"127.0.0.{n}")
                            for _ in range(min(left, UNIDENTIFIED_PER_SOURCE))]
            await closed_without_a_word(await hold(f"127.0.0.{3 + sources}"))
            # Those already waiting still wait: the refused ones met the bound, not
            # the deadline.
            await waiting[0].send(HEADER.pack(0x01, 16)[1:] + uuid.uuid4().bytes)
            await closed_without_a_word(waiting[0])  # an unknown identifier, answered
            for stream in waiting[1:]:
                await stream.aclose()
            # Once they are gone, the telephone system's call is taken again.
            asterisk = await one_question(host, port, await pbx_answer(api), engines,
                                          hang_up=True)
            assert asterisk.frames()


async def test_pbx_opening_that_cannot_be_said_ends_with_our_hangup_notice_failed(
        api, services):
    found = await voice_deployment(
        api, services, provider="pbx", engines=FakeEngines(synthesiser=FakeSynthesiser(down=True)))
    identifier, asterisk = await heard_until_closed(found, 10)
    *before, last = asterisk.frames()
    assert last == (0x00, b"")  # our hangup, then the socket closed
    # Nothing was said: at most the silence that keeps Asterisk's line fed while the
    # synthesiser was failing.
    assert all(kind == 0x10 and not payload.strip(b"\x00") for kind, payload in before)
    call = await TelephonyCall.select().first()
    assert call["outcome"] == "notice_failed"
    after = await api.get("/api/telephony/pbx/continue", headers=KEY, params={"call": identifier})
    assert after.text == ""


# -- the carrier's media WebSocket


def ws_url(api) -> str:
    return str(api.base_url).replace("http://", "ws://") + "/api/telephony/carrier/media"


async def carrier_ticket(api) -> str:
    answer = await carrier_post(api, "/api/telephony/carrier/voice", voice_params())
    assert answer.status_code == 200, answer.text
    return answer.text.split('name="ticket" value="')[1].split('"')[0]


def start_message(ticket: str | None) -> str:
    parameters = {"ticket": ticket} if ticket is not None else {}
    return json.dumps({"event": "start", "sequenceNumber": "1", "streamSid": "MZ1", "start": {
        "streamSid": "MZ1", "accountSid": "AC0001", "callSid": "CA0001",
        "tracks": ["inbound"], "customParameters": parameters,
        "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}})


def media_message(ulaw: bytes, chunk: int) -> str:
    return json.dumps({"event": "media", "streamSid": "MZ1", "media": {
        "track": "inbound", "chunk": str(chunk), "timestamp": str(chunk * 20),
        "payload": base64.b64encode(ulaw).decode()}})


async def test_carrier_stream_without_a_valid_ticket_closes_without_a_word(api, services):
    await voice_deployment(api, services, provider="carrier", engines=FakeEngines())
    for ticket in (None, "not-a-ticket"):
        with anyio.fail_after(10):
            async with ws_connect(ws_url(api)) as socket_:
                await socket_.send(json.dumps({"event": "connected", "protocol": "Call",
                                               "version": "1.0.0"}))
                await socket_.send(start_message(ticket))
                with pytest.raises(websockets.ConnectionClosed):
                    await socket_.recv()  # nothing is said before the close


async def test_carrier_media_path_is_absent_while_the_feature_is_dormant(api, services):
    found = await voice_deployment(api, services, provider="carrier", engines=FakeEngines())
    await found.setting("features.telephony", False)
    with pytest.raises(websockets.InvalidStatus) as refused:
        async with ws_connect(ws_url(api)):
            pass
    assert refused.value.response.status_code == 404


async def test_carrier_call_speech_over_the_answer_sends_clear(api, services):
    from kernels.ulaw import lin2ulaw, ulaw2lin

    engines = FakeEngines()
    found = await voice_deployment(api, services, provider="carrier", engines=engines)
    await found.patch_line(notice="Hello caller. " * 4)
    ticket = await carrier_ticket(api)
    received: list[dict] = []
    with anyio.fail_after(30):
        async with ws_connect(ws_url(api)) as socket_:
            chunk = 0

            async def send_audio(pcm: bytes) -> None:
                nonlocal chunk
                chunk += 1
                await socket_.send(media_message(lin2ulaw(pcm), chunk))

            caller = Caller(send_audio)

            async def read() -> None:
                async for text in socket_:
                    message = json.loads(text)
                    received.append(message)
                    if message["event"] == "mark":  # the carrier returns a mark once played
                        await socket_.send(json.dumps({"event": "mark", "streamSid": "MZ1",
                                                       "mark": message["mark"]}))

            def count(event: str) -> int:
                return sum(1 for m in received if m["event"] == event)

            await socket_.send(start_message(ticket))
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(read)
                tasks.start_soon(caller.run)
                while count("mark") < 1:  # the opening was played whole
                    await anyio.sleep(0.05)
                await caller.say(0.3)  # a question; its answer is long
                while count("media") < frames_for(found.line["notice"]) + 10:  # answering
                    await anyio.sleep(0.05)
                await caller.say(0.4)  # the caller talks over the answer
                while count("clear") < 1:
                    await anyio.sleep(0.05)
                await anyio.sleep(0.5)
                caller.silent = True
                await socket_.send(json.dumps({"event": "stop", "streamSid": "MZ1", "stop": {
                    "accountSid": "AC0001", "callSid": "CA0001"}}))
                tasks.cancel_scope.cancel()
    media = [m for m in received if m["event"] == "media"]
    assert all(len(base64.b64decode(m["media"]["payload"])) == 160 for m in media)
    assert all(len(ulaw2lin(base64.b64decode(m["media"]["payload"]))) == 320 for m in media)
    assert all(m["streamSid"] == "MZ1" for m in received)
    await anyio.sleep(0.2)
    call = await TelephonyCall.select().first()
    assert call["outcome"] == "completed"


# -- putting the caller through


async def pbx_call_asking_for_a_person(api, found, engines: FakeEngines) -> tuple[str, Asterisk]:
    """A pbx call whose one question asks for a person, to an agent with the put-through
    tool; returns the identifier and what the telephone system saw."""
    engines.recogniser.transcripts = ["Can I speak to a person please"]
    response = await api.patch(f"/api/agents/{found.agent_id}", headers=found.owner,
                               json={"tools": ["put_through"]})
    assert response.status_code == 200, response.text
    async with listening(found) as (host, port):
        identifier = await pbx_answer(api)
        asterisk = await one_question(host, port, identifier, engines, hang_up=False)
    return identifier, asterisk


async def test_a_transfer_the_gate_lets_through_ends_our_side_and_continue_dials(api, services):
    engines = FakeEngines()
    found = await voice_deployment(api, services, provider="pbx", engines=engines)
    identifier, asterisk = await pbx_call_asking_for_a_person(api, found, engines)
    assert asterisk.closed.is_set()
    assert asterisk.frames()[-1] == (0x00, b"")  # we ended with a hangup frame
    call = await TelephonyCall.select().first()
    assert call["outcome"] == "transferred" and call["transfer_approved"]
    after = await api.get("/api/telephony/pbx/continue", headers=KEY,
                          params={"call": identifier})
    assert after.text == "+441632960999"


async def test_a_transfer_the_screening_gate_refuses_does_not_transfer(api, services):
    engines = FakeEngines()
    found = await voice_deployment(api, services, provider="pbx", engines=engines)
    listed = await api.post("/api/conflict-names", headers=found.owner,
                            json={"names": "John Brown"})
    assert listed.status_code == 200, listed.text
    identifier, asterisk = await pbx_call_asking_for_a_person(api, found, engines)
    assert len(engines.synthesiser.spoken) == 2  # the agent answered the request
    assert (0x00, b"") not in asterisk.frames()  # the call went on; the caller hung up
    call = await TelephonyCall.select().first()
    assert not call["transfer_approved"] and call["outcome"] != "transferred"
    after = await api.get("/api/telephony/pbx/continue", headers=KEY,
                          params={"call": identifier})
    assert after.text == ""


async def test_tools_on_a_call_run_under_the_configured_ceiling(api, services):
    from app.services.pipeline import call_tool_policy
    from core.pipeline import ToolSpec

    found = await voice_deployment(api, services, provider="pbx", engines=FakeEngines())
    await found.setting("telephony.tool_timeout_secs", 3)
    policy = await call_tool_policy(services.settings)
    assert policy.timeout_seconds == 3
    unmarked = ToolSpec("send_invoice", "Sends an invoice.", side_effecting=True)
    assert "offer to take a message" in policy.check(unmarked)
    assert policy.timeout_text(unmarked) == policy.check(unmarked)


async def test_a_media_message_over_32_kib_closes_the_stream(api, services):
    await voice_deployment(api, services, provider="carrier", engines=FakeEngines())
    with anyio.fail_after(10):
        async with ws_connect(ws_url(api), max_size=None) as socket_:
            await socket_.send("x" * (32 * 1024 + 1))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await socket_.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


async def test_a_recorded_call_leaves_a_two_channel_mulaw_wav(api, services, boot):
    import soundfile

    engines = FakeEngines()
    found = await voice_deployment(api, services, provider="pbx", engines=engines)
    await found.patch_line(record_calls=True, recording_days=30, notice="Hello caller.")
    opening = "Hello caller. This call is recorded."
    async with listening(found) as (host, port):
        await one_question(host, port, await pbx_answer(api), engines, hang_up=True,
                           opening=opening)
    call = await TelephonyCall.select().first()
    assert engines.synthesiser.spoken[0] == opening
    assert not call["recording_failed"]
    path = f"{boot['storage.recordings_dir']}/{call['id']}.wav"
    info = soundfile.info(path)
    assert (info.channels, info.samplerate, info.subtype) == (2, 8000, "ULAW")
    audio, _ = soundfile.read(path)
    assert abs(audio[:, 0]).max() > 0.1 and abs(audio[:, 1]).max() > 0.05  # both sides


async def test_a_recording_that_cannot_be_written_marks_the_call_and_it_goes_on(
        api, services, boot, tmp_path):
    engines = FakeEngines()
    found = await voice_deployment(api, services, provider="pbx", engines=engines)
    await found.patch_line(record_calls=True, recording_days=30, notice="Hello caller.")
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the recordings directory should be")
    services.call_voice.recordings_dir = str(blocked)
    async with listening(found) as (host, port):
        await one_question(host, port, await pbx_answer(api), engines, hang_up=True,
                           opening="Hello caller. This call is recorded.")
    call = await TelephonyCall.select().first()
    assert call["recording_failed"] and call["outcome"] == "completed"
    assert len(engines.synthesiser.spoken) == 2  # the conversation went on
