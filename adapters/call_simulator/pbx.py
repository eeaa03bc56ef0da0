"""Ringing a line as the operator's own telephone system (Asterisk) would.

The sequence is the dialplan's (spec: telephony.md "Setup: own-telephone-system
transport"): ``GET /api/telephony/pbx/answer?from=…&to=…`` with the shared secret in
``x-service-telephony-key``; an empty answer means hang up. Then an AudioSocket
connection to the listen address — identifier first, caller audio in 320-byte frames
every 20 ms, the socket closed when the caller hangs up, an error frame for any kind
Asterisk does not accept (``core.audiosocket.AudioSocketClient``). When it ends,
``GET /api/telephony/pbx/continue?call=…``: the number to transfer to, or empty.
"""

from __future__ import annotations

import uuid

import aiohttp
import anyio
import anyio.abc

from adapters.call_simulator.audio import FRAME_BYTES
from adapters.call_simulator.script import Action, Caller
from adapters.call_simulator.session import CallReport, Clock, Ear, converse
from core.audiosocket import AudioReceived, AudioSocketClient, ClientState, HangupReceived
from core.errors import RemoteProtocolError
from core.playout import Playout

__all__ = ["PbxLine", "ring_pbx"]

ANSWER_PATH = "/api/telephony/pbx/answer"
CONTINUE_PATH = "/api/telephony/pbx/continue"
KEY_HEADER = "x-service-telephony-key"


class PbxLine:
    """The AudioSocket connection of one call, as ``converse`` drives it. Asterisk
    plays each frame as it comes; ``playout`` puts them on the call's timeline."""

    def __init__(self, stream: anyio.abc.ByteStream, call_id: uuid.UUID,
                 report: CallReport) -> None:
        self.playout = Playout(FRAME_BYTES, b"\x00")
        self.stream = stream
        self.client = AudioSocketClient(call_id)
        self.report = report

    async def introduce(self) -> None:
        """Write the identifier frame: the first thing Asterisk sends."""
        await self.stream.send(self.client.data_to_send())

    async def send(self, action: Action, frame: bytes, digit: str, at_ms: int) -> None:
        # The line may have hung up since this frame was decided: then nothing goes out.
        if action is Action.NOTHING or self.client.state is not ClientState.OPEN:
            return
        if action is Action.KEY:
            self.client.send_dtmf(digit)
        self.client.send_audio(frame)
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
                    ear.arrived(clock.now(), event.pcm, odd=len(event.pcm) != FRAME_BYTES)
                    self.playout.push_audio(event.pcm)
                elif isinstance(event, HangupReceived):
                    await self._write_and_close(b"")
                    return

    def play(self) -> tuple[bytes, bytes]:
        played = self.playout.take()
        return played.audio, played.line_audio

    def drain(self) -> bytes:
        return self.playout.drain()

    async def hang_up(self) -> None:
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
                   http: aiohttp.ClientSession) -> CallReport:
    """Ring ``dialled`` from ``caller_number`` over the pbx transport and run
    ``caller``'s script on the call. ``http`` is used for the dialplan's questions."""
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
    line = PbxLine(stream, call_id, report)
    await line.introduce()
    await converse(line, caller, report)
    async with http.get(base + CONTINUE_PATH, headers=headers,
                        params={"call": identifier}) as proceed:
        number = (await proceed.text()).strip() if proceed.status == 200 else ""
    report.transfer_to = number or None
    return report
