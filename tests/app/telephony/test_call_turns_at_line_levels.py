"""Turn-taking over both real transports at the levels a real line brings: a short
answer and a quiet question are answered over the pbx transport, and over the
carrier's media stream a caller speaking over the answer at an ordinary level stops
it and is heard as the next turn from the start (spec: telephony.md "Speech dials for
calls")."""

from __future__ import annotations

import json

import anyio
import pytest
from websockets.asyncio.client import connect as ws_connect

from tests.app.telephony.test_call_voice_transports import (
    Asterisk,
    carrier_ticket,
    dial_in,
    frames_for,
    listening,
    media_message,
    pbx_answer,
    start_message,
    voice_deployment,
    ws_url,
)
from tests.fakes.voice import FakeEngines
from tests.support.speech_signals import Voice

pytestmark = pytest.mark.anyio


async def test_pbx_a_short_yes_and_a_question_at_minus_32_dbfs_are_answered(api, services):
    engines = FakeEngines()
    engines.recogniser.transcripts = ["yes", "when do you open"]
    found = await voice_deployment(api, services, provider="pbx", engines=engines)
    async with listening(found) as (host, port):
        identifier = await pbx_answer(api)
        with anyio.fail_after(30):
            async with await dial_in(host, port, identifier) as stream:
                asterisk = Asterisk(stream)
                loud = Voice(asterisk.send_audio, -26.0)
                quiet = Voice(asterisk.send_audio, -32.0)
                quiet.silent = True
                asterisk.caller = loud
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(asterisk.read)
                    tasks.start_soon(loud.run)
                    while len(asterisk.frames()) < frames_for("Hello caller."):
                        await anyio.sleep(0.05)
                    await anyio.sleep(0.3)
                    await loud.say(0.25)  # "yes"
                    while len(engines.synthesiser.spoken) < 2:
                        await anyio.sleep(0.05)
                    await anyio.sleep(0.5)
                    loud.silent, quiet.silent = True, False
                    tasks.start_soon(quiet.run)
                    await quiet.say(1.0)  # a question, quietly
                    while len(engines.synthesiser.spoken) < 3:
                        await anyio.sleep(0.05)
                    quiet.silent = True
                    tasks.cancel_scope.cancel()
    (yes_bytes, rate), (question_bytes, _) = engines.recogniser.heard
    assert yes_bytes >= 0.25 * rate * 2 and question_bytes >= 1.0 * rate * 2


class CarrierLine:
    """The carrier's side of a media stream: our audio in μ-law, marks returned."""

    def __init__(self, socket_) -> None:
        self.socket = socket_
        self.events: list[str] = []
        self.chunks = 0

    async def send_audio(self, pcm: bytes) -> None:
        from kernels.ulaw import lin2ulaw

        self.chunks += 1
        await self.socket.send(media_message(lin2ulaw(pcm), self.chunks))

    async def read(self) -> None:
        async for text in self.socket:
            message = json.loads(text)
            self.events.append(message["event"])
            if message["event"] == "mark":  # played: the carrier says so
                await self.socket.send(json.dumps(
                    {"event": "mark", "streamSid": "MZ1", "mark": message["mark"]}))

    async def until(self, event: str, count: int) -> None:
        while self.events.count(event) < count:
            await anyio.sleep(0.05)


async def test_carrier_speech_over_the_answer_at_an_ordinary_level_is_kept(api, services):
    engines = FakeEngines()
    await voice_deployment(api, services, provider="carrier", engines=engines)
    ticket = await carrier_ticket(api)
    with anyio.fail_after(30):
        async with ws_connect(ws_url(api)) as socket_:
            line = CarrierLine(socket_)
            caller = Voice(line.send_audio, -26.0)
            await socket_.send(start_message(ticket))
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(line.read)
                tasks.start_soon(caller.run)
                await line.until("mark", 1)  # the opening, played whole
                await caller.say(0.4)
                await line.until("media", frames_for("Hello caller.") + 5)  # answering
                await caller.say(0.8)  # over the answer (the built-in model's), at −26 dBFS
                await line.until("clear", 1)
                while len(engines.recogniser.heard) < 2:
                    await anyio.sleep(0.05)
                caller.silent = True
                tasks.cancel_scope.cancel()
    (_, _), (kept, rate) = engines.recogniser.heard
    assert kept >= (0.8 + 0.3 - 0.04) * rate * 2  # all of it from its onset, and the pause
