"""Turn-taking over both real transports at the levels a real line brings: a short
answer and a quiet question are answered, and a caller speaking over the answer at an
ordinary level stops it and is heard as the next turn from the start (spec:
telephony.md "Speech dials for calls")."""

from __future__ import annotations

import contextlib
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

    def played(self) -> int:
        """Frames of our audio the caller has been sent."""
        return self.events.count("media")

    async def opening_heard(self) -> None:
        await self.until("mark", 1)  # the opening, played whole


class PbxLine(Asterisk):
    """Asterisk's side, seen as the carrier's is: frames played, the opening heard."""

    def played(self) -> int:
        """Frames of our speech the caller has heard; the silence sent between turns,
        which keeps Asterisk from hanging up, is not counted."""
        return sum(1 for kind, pcm in self.frames() if kind == 0x10 and pcm.strip(b"\x00"))

    async def opening_heard(self) -> None:
        while self.played() < frames_for("Hello caller."):
            await anyio.sleep(0.05)
        await anyio.sleep(0.3)  # Asterisk plays what it is sent as it arrives


@contextlib.asynccontextmanager
async def answered(api, services, via: str, engines: FakeEngines):
    """A call on ``via`` answered with ``engines``; yields the caller's side of it."""
    found = await voice_deployment(api, services, provider=via, engines=engines)
    with anyio.fail_after(30):
        if via == "pbx":
            async with listening(found) as (host, port):
                identifier = await pbx_answer(api)
                async with await dial_in(host, port, identifier) as stream:
                    yield PbxLine(stream)
        else:
            ticket = await carrier_ticket(api)
            async with ws_connect(ws_url(api)) as socket_:
                await socket_.send(start_message(ticket))
                yield CarrierLine(socket_)


@pytest.mark.parametrize("via", ["carrier", "pbx"])
async def test_a_short_yes_and_a_question_at_minus_32_dbfs_are_answered(api, services, via):
    engines = FakeEngines()
    engines.recogniser.transcripts = ["yes", "when do you open"]
    async with answered(api, services, via, engines) as line:
        loud = Voice(line.send_audio, -26.0)
        quiet = Voice(line.send_audio, -32.0)
        quiet.silent = True
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(line.read)
            tasks.start_soon(loud.run)
            await line.opening_heard()
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


@pytest.mark.parametrize("via", ["carrier", "pbx"])
async def test_speech_over_the_answer_at_an_ordinary_level_is_kept(api, services, via):
    engines = FakeEngines()
    async with answered(api, services, via, engines) as line:
        caller = Voice(line.send_audio, -26.0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(line.read)
            tasks.start_soon(caller.run)
            await line.opening_heard()
            await caller.say(0.4)
            while line.played() < frames_for("Hello caller.") + 5:  # answering
                await anyio.sleep(0.05)
            await caller.say(0.8)  # over the answer (the built-in model's), at −26 dBFS
            if via == "carrier":
                await line.until("clear", 1)
            while len(engines.recogniser.heard) < 2:
                await anyio.sleep(0.05)
            caller.silent = True
            tasks.cancel_scope.cancel()
    (_, _), (kept, rate) = engines.recogniser.heard
    assert kept >= (0.8 + 0.3 - 0.04) * rate * 2  # all of it from its onset, and the pause
