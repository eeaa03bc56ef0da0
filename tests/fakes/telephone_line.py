"""A small telephone line built from the service's own sans-IO machines, on loopback.

It answers the pbx questions and the carrier webhooks, accepts AudioSocket
connections and the media WebSocket (``core.audiosocket.AudioSocketConnection``,
``core.carrier_media.CarrierConnection``), plays an opening, then answers each turn
of the caller's speech with a reply tone, and can be told to misbehave. The
simulator's tests ring it; the end-to-end tests ring the real service instead.
"""

from __future__ import annotations

import contextlib
import math
import struct
import uuid
from dataclasses import dataclass, field
from typing import AsyncIterator

import anyio
from aiohttp import web

from core import twiml
from core.audiosocket import (
    AudioReceived,
    AudioSocketConnection,
    ErrorReceived,
    HangupReceived,
    IdentifierReceived,
    SendAudio,
    SendHangup,
)
from core.carrier_media import (
    CarrierConnection,
    DtmfReceived,
    MarkReceived,
    MediaReceived,
    MessageIgnored,
    StreamStarted,
)
from core.errors import RemoteProtocolError
from core.twilio_signature import parse_form, verify
from kernels.energy import rms
from kernels.resample import resample
from kernels.ulaw import lin2ulaw, ulaw2lin
from tests.support.aiohttp_site import serving

SECRET = "line-secret"
CREDENTIAL = "carrier-credential"
TRANSFER = "+441632960999"


def tone(ms: int, hz: float = 440.0, level: float = 0.3) -> bytes:
    """A sine tone, 8 kHz signed linear."""
    count = 8 * ms
    return struct.pack(f"<{count}h", *(int(level * 32767 * math.sin(2 * math.pi * hz * n / 8000))
                                       for n in range(count)))


@dataclass
class Behaviour:
    """What the fake line does on a call."""

    opening_ms: int = 600
    reply_ms: int = 400
    #: Hang up after this many replies.
    replies: int = 1
    #: Send this frame kind after the opening instead of carrying on (a protocol fault).
    bad_kind: int | None = None
    #: Approve a transfer once the call ends.
    transfer: bool = False
    #: Pbx: send nothing while nothing is said (else silence, as the service does).
    quiet_pbx: bool = False


@dataclass
class FakeLine:
    behaviour: Behaviour = field(default_factory=Behaviour)
    #: The public address the carrier signs, and where the fake answers HTTP.
    base_url: str = ""
    http_url: str = ""
    audiosocket: tuple[str, int] = ("127.0.0.1", 0)
    tickets: dict[str, bool] = field(default_factory=dict)
    #: Caller frames heard per call, marks returned (name, heard), webhooks received.
    caller_frames: list[int] = field(default_factory=list)
    marks: list[tuple[str, bool]] = field(default_factory=list)
    webhooks: list[tuple[str, str]] = field(default_factory=list)
    #: Keys the caller pressed, what the stream ignored, error frames from Asterisk,
    #: and whether it closed the connection after a frame it does not accept.
    keys: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    errors_received: list[object] = field(default_factory=list)
    closed_after_fault: bool | None = None

    # -- signalling

    def _mint(self) -> str:
        ticket = str(uuid.uuid4())
        self.tickets[ticket] = False
        return ticket

    async def pbx_answer(self, request: web.Request) -> web.Response:
        if request.headers.get("x-service-telephony-key") != SECRET:
            return web.Response(status=403, text="")
        return web.Response(text=self._mint())

    async def pbx_continue(self, request: web.Request) -> web.Response:
        return web.Response(text=TRANSFER if self.behaviour.transfer else "")

    async def _signed(self, request: web.Request) -> dict[str, str] | None:
        body = await request.read()
        pairs = parse_form(body)
        url = self.base_url + request.path
        if not verify(CREDENTIAL, url, pairs, request.headers.get("X-Twilio-Signature")):
            return None
        return dict(pairs)

    def _twiml(self, document: bytes) -> web.Response:
        return web.Response(body=document, content_type="text/xml")

    async def carrier_voice(self, request: web.Request) -> web.Response:
        params = await self._signed(request)
        if params is None:
            return web.Response(status=403)
        self.webhooks.append(("voice", params["CallStatus"]))
        public = "https://calls.example.org"
        return self._twiml(twiml.connect_stream(
            public + "/api/telephony/carrier/continue",
            "wss://calls.example.org/api/telephony/carrier/media", {"ticket": self._mint()}))

    async def carrier_status(self, request: web.Request) -> web.Response:
        params = await self._signed(request)
        self.webhooks.append(("status", params["CallStatus"] if params else "unsigned"))
        return self._twiml(twiml.empty())

    async def carrier_continue(self, request: web.Request) -> web.Response:
        params = await self._signed(request)
        self.webhooks.append(("continue", params["CallStatus"] if params else "unsigned"))
        return self._twiml(twiml.dial(TRANSFER) if self.behaviour.transfer else twiml.hangup())

    def _redeem(self, ticket: str) -> bool:
        if self.tickets.get(ticket) is False:
            self.tickets[ticket] = True
            return True
        return False

    # -- the conversation, shared by both transports

    async def _talk(self, send, receive_frames) -> None:
        """Play the opening, then reply to each turn of the caller's speech."""
        heard = 0
        await _paced(send, tone(self.behaviour.opening_ms))
        if self.behaviour.bad_kind is not None:
            return
        for _ in range(self.behaviour.replies):
            speaking = quiet = 0
            async for frame in receive_frames():
                heard += 1
                if rms(frame) > 0.05:
                    speaking, quiet = speaking + 1, 0
                elif speaking:
                    quiet += 1
                if speaking >= 5 and quiet >= 15:
                    break
            else:
                break
            await _paced(send, tone(self.behaviour.reply_ms, hz=660))
        self.caller_frames.append(heard)

    # -- pbx audio

    async def serve_audiosocket(self, stream) -> None:
        connection = AudioSocketConnection()
        inbound: anyio.abc.ObjectSendStream
        inbound, frames = anyio.create_memory_object_stream(1000)

        listening = [False]  # waiting for the caller's turn, saying nothing
        # The silence between turns and what the line says come from two tasks: one
        # writer at a time, so their frames never interleave on the socket.
        writing = anyio.Lock()

        async def write(pcm: bytes) -> None:
            # Answered at the caller's rate, in the caller's kind, as the service does.
            if connection.rate != 8000:
                pcm = resample(pcm, 8000, connection.rate)
            async with writing:
                connection.send(SendAudio(pcm))
                await stream.send(connection.data_to_send())

        async def send(pcm: bytes) -> None:
            listening[0] = False
            await write(pcm)

        async def keep_busy() -> None:
            # Silence while it listens, as the service does (Asterisk gives up after
            # 2 s without audio); ``quiet_pbx`` leaves the line quiet instead.
            while not self.behaviour.quiet_pbx:
                await anyio.sleep(0.02)
                if listening[0]:
                    await write(bytes(320))

        async def receive_frames():
            listening[0] = True
            async for frame in frames:
                yield frame

        async with stream:
            try:
                connection.receive_data(await stream.receive())
            except RemoteProtocolError:
                return
            events = connection.events_received()
            if not events or not isinstance(events[0], IdentifierReceived) or not self._redeem(
                    str(events[0].call_id)):
                return
            async with anyio.create_task_group() as tasks:
                async def read() -> None:
                    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                        while True:
                            connection.receive_data(await stream.receive())
                            for event in connection.events_received():
                                if isinstance(event, AudioReceived):
                                    pcm = event.pcm if event.rate == 8000 else resample(
                                        event.pcm, event.rate, 8000)
                                    await inbound.send(pcm)
                                elif isinstance(event, HangupReceived):
                                    raise anyio.EndOfStream
                                elif isinstance(event, ErrorReceived):
                                    self.errors_received.append(event)
                    inbound.close()
                    if self.behaviour.bad_kind is not None:
                        self.closed_after_fault = True
                    tasks.cancel_scope.cancel()

                tasks.start_soon(read)
                tasks.start_soon(keep_busy)
                await self._talk(send, receive_frames)
                listening[0] = False
                if self.behaviour.bad_kind is not None:
                    async with writing:
                        await stream.send(bytes([self.behaviour.bad_kind, 0, 1, 0x31]))
                    await anyio.sleep(2)  # the reading task ends it once Asterisk closes
                    self.closed_after_fault = False
                else:
                    async with writing:
                        connection.send(SendHangup())
                        await stream.send(connection.data_to_send())
                tasks.cancel_scope.cancel()

    # -- carrier audio

    async def carrier_media(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        connection = CarrierConnection()
        inbound, frames = anyio.create_memory_object_stream(1000)

        async def flush() -> None:
            for message in connection.data_to_send():
                await socket.send_str(message)

        async def send(pcm: bytes) -> None:
            connection.send_media(lin2ulaw(pcm))
            await flush()

        async def receive_frames():
            async for frame in frames:
                yield frame

        async def read() -> None:
            async for message in socket:
                connection.receive_text(message.data)
                for event in connection.events_received():
                    if isinstance(event, StreamStarted):
                        if not self._redeem(event.custom_parameters.get("ticket", "")):
                            await socket.close()
                            return
                        started.set()
                    elif isinstance(event, MediaReceived):
                        await inbound.send(ulaw2lin(event.ulaw))
                    elif isinstance(event, MarkReceived):
                        self.marks.append((event.name, event.heard))
                    elif isinstance(event, DtmfReceived):
                        self.keys.append(event.digit)
                    elif isinstance(event, MessageIgnored):
                        self.ignored.append(event.reason)
            inbound.close()

        started = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            await started.wait()
            connection.send_mark("opening")
            await self._talk(send, receive_frames)
            connection.send_mark("end")
            await flush()
            await anyio.sleep(0.3)
            await socket.close()
            tasks.cancel_scope.cancel()
        return socket


async def _paced(send, pcm: bytes) -> None:
    """Send audio in 320-byte frames every 20 ms, as the service does."""
    start = anyio.current_time()
    for index in range(0, len(pcm) - 319, 320):
        await send(pcm[index:index + 320])
        await anyio.sleep_until(start + (index // 320 + 1) * 0.02)


@contextlib.asynccontextmanager
async def running_fake_line(behaviour: Behaviour | None = None) -> AsyncIterator[FakeLine]:
    line = FakeLine(behaviour or Behaviour())
    app = web.Application()
    app.router.add_get("/api/telephony/pbx/answer", line.pbx_answer)
    app.router.add_get("/api/telephony/pbx/continue", line.pbx_continue)
    app.router.add_post("/api/telephony/carrier/voice", line.carrier_voice)
    app.router.add_post("/api/telephony/carrier/status", line.carrier_status)
    app.router.add_post("/api/telephony/carrier/continue", line.carrier_continue)
    app.router.add_get("/api/telephony/carrier/media", line.carrier_media)
    async with serving(app) as port:
        line.base_url = "https://calls.example.org"
        line.http_url = f"http://127.0.0.1:{port}"
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        line.audiosocket = ("127.0.0.1", listener.extra(anyio.abc.SocketAttribute.local_port))
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(listener.serve, line.serve_audiosocket)
            try:
                yield line
            finally:
                tasks.cancel_scope.cancel()
        await listener.aclose()
