"""Ringing a line as the operator's own telephone system (Asterisk) would.

The sequence is the dialplan's (spec: telephony.md "Setup: own-telephone-system
transport"): ``GET /api/telephony/pbx/answer?from=…&to=…`` with the shared secret in
``x-service-telephony-key``; an empty answer means hang up. Then an AudioSocket
connection to the listen address — identifier first, caller audio in 20 ms frames
every 20 ms (at 8 kHz in kind 0x10, as the AudioSocket application sends it, or at
the channel's rate — ``rate=16000`` sends slin16, kind 0x12 — as the channel driver
``Dial(AudioSocket/…/c(slin16))`` does), the socket closed when the caller hangs up
(``core.audiosocket.AudioSocketClient``). As Asterisk does, it drops the call — closes
the socket without a word — on a kind it does not accept, and hangs up when the
service has sent no audio for ``INACTIVITY_MS`` (2 seconds). When it ends,
``GET /api/telephony/pbx/continue?call=…``: the number to transfer to, or empty.
"""

from __future__ import annotations

__all__ = ["PbxLine", "ring_pbx"]

import uuid

import aiohttp
import anyio
import anyio.abc

from adapters.call_simulator.audio import CALL_RATE, FRAME_BYTES
from adapters.call_simulator.script import Action, Caller
from adapters.call_simulator.session import CallReport, Clock, Ear, converse
from core.audiosocket import AudioReceived, AudioSocketClient, ClientState, HangupReceived
from core.errors import RemoteProtocolError
from core.playout import Playout
from kernels.resample import Resampler

ANSWER_PATH = "/api/telephony/pbx/answer"
CONTINUE_PATH = "/api/telephony/pbx/continue"
KEY_HEADER = "x-service-telephony-key"
#: Asterisk's AudioSocket gives up on a connection that sent nothing for this long.
INACTIVITY_MS = 2000


class PbxLine:
    """The AudioSocket connection of one call, as ``converse`` drives it. Asterisk
    plays each frame as it comes; ``playout`` puts them on the call's timeline."""

    def __init__(self, stream: anyio.abc.ByteStream, call_id: uuid.UUID,
                 report: CallReport, rate: int = CALL_RATE) -> None:
        self.playout = Playout(FRAME_BYTES, b"\x00")
        self.stream = stream
        self.client = AudioSocketClient(call_id, rate)
        self.report = report
        # The caller's 8 kHz to the channel's rate, and the service's audio back.
        self._up = Resampler(CALL_RATE, rate) if rate != CALL_RATE else None
        self._down: dict[int, Resampler] = {}
        self._last_audio_ms = 0  # the service's last audio, on the call's clock

    async def introduce(self) -> None:
        """Write the identifier frame: the first thing Asterisk sends."""
        await self.stream.send(self.client.data_to_send())

    async def send(self, action: Action, frame: bytes, digit: str, at_ms: int) -> None:
        # The line may have hung up since this frame was decided: then nothing goes out.
        if action is Action.NOTHING or self.client.state is not ClientState.OPEN:
            return
        if at_ms - self._last_audio_ms > INACTIVITY_MS:
            # Asterisk: "no activity" for 2 s — it hangs up by closing the socket.
            self.report.ended_by = "inactivity"
            self.report.fault = f"the service sent no audio for {INACTIVITY_MS} ms"
            await self.hang_up()
            return
        if action is Action.KEY:
            self.client.send_dtmf(digit)
        self.client.send_audio(self._up.process(frame) if self._up is not None else frame)
        try:
            await self.stream.send(self.client.data_to_send())
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the line hung up; the reading side reports it

    async def receive(self, ear: Ear, clock: Clock) -> None:
        while self.client.state is ClientState.OPEN:
            try:
                data = await self.stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError,
                    OSError):
                data = b""
            try:
                self.client.receive_data(data)
            except RemoteProtocolError as exc:
                self.report.fault = str(exc)
                self.report.ended_by = "fault"
                await self._write_and_close(self.client.data_to_send())
                return
            for event in self.client.events_received():
                if isinstance(event, AudioReceived):
                    self._last_audio_ms = round(clock.now() * 1000)
                    twenty_ms = event.rate // 50 * 2
                    pcm = self._to_call_rate(event)
                    ear.arrived(clock.now(), pcm, odd=len(event.pcm) != twenty_ms)
                    self.report.rates.add(event.rate)
                    self.playout.push_audio(pcm)
                elif isinstance(event, HangupReceived):
                    await self._write_and_close(b"")
                    return

    def _to_call_rate(self, event: AudioReceived) -> bytes:
        if event.rate == CALL_RATE:
            return event.pcm
        if event.rate not in self._down:
            self._down[event.rate] = Resampler(event.rate, CALL_RATE)
        return self._down[event.rate].process(event.pcm)

    def play(self) -> tuple[bytes, bytes]:
        played = self.playout.take()
        return played.audio, played.line_audio

    def drain(self) -> bytes:
        return self.playout.drain()

    async def hang_up(self) -> None:
        if self.client.state is ClientState.OPEN:
            self.client.hang_up()
        await self.stream.aclose()

    async def _write_and_close(self, data: bytes) -> None:
        try:
            if data:
                await self.stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        await self.stream.aclose()


async def ring_pbx(*, server_url: str, audiosocket: tuple[str, int], secret: str,
                   caller_number: str, dialled: str, caller: Caller,
                   http: aiohttp.ClientSession, rate: int = CALL_RATE) -> CallReport:
    """Ring ``dialled`` from ``caller_number`` over the pbx transport and run
    ``caller``'s script on the call. ``http`` is used for the dialplan's questions;
    ``rate`` is the channel's (8000: the AudioSocket application's 0x10 frames)."""
    report = CallReport(transport="pbx")
    headers = {KEY_HEADER: secret}
    base = server_url.rstrip("/")
    async with http.get(base + ANSWER_PATH, headers=headers,
                        params={"from": caller_number, "to": dialled}) as answered:
        identifier = (await answered.text()).strip() if answered.status == 200 else ""
    if not identifier:
        report.ended_by = "refused"
        report.fault = f"the answer request gave no identifier (HTTP {answered.status})"
        return report
    try:
        call_id = uuid.UUID(identifier)
    except ValueError:
        report.ended_by = "fault"
        report.fault = f"the answer request gave {identifier[:40]!r}, not an identifier"
        return report
    report.answered = True
    report.call_reference = identifier
    host, port = audiosocket
    stream = await anyio.connect_tcp(host, port)
    line = PbxLine(stream, call_id, report, rate)
    await line.introduce()
    await converse(line, caller, report)
    async with http.get(base + CONTINUE_PATH, headers=headers,
                        params={"call": identifier}) as proceed:
        number = (await proceed.text()).strip() if proceed.status == 200 else ""
    report.transfer_to = number or None
    return report
