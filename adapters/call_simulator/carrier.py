"""Ringing a line as a Twilio-compatible telephone carrier would.

The sequence is the carrier's (DESIGN.md "Carrier"): ``POST /api/telephony/carrier/
voice`` with the form-encoded voice webhook, signed with the stored carrier
credential by Twilio's algorithm; the TwiML answer is ``<Reject/>`` or ``<Connect
action=…><Stream url=…><Parameter …/></Stream></Connect>``. The simulator then opens
the stream's WebSocket and speaks Twilio Media Streams from the carrier's end
(``core.carrier_media.CarrierStreamClient``): ``connected``, ``start`` with the
parameters (the ticket) as ``customParameters``, caller audio as base64 μ-law every
20 ms, keys as ``dtmf``, marks returned once their audio played, an event of a later
version of the stream when the script asks for one, ``stop`` when the caller hangs up.
When the service ends the stream the carrier asks the ``action`` address what next
(``<Dial>`` or ``<Hangup/>``); at the end of the call it posts the final status.

The signed addresses are the public ones the service gave or is configured with;
requests go to ``server_url``, as a reverse proxy in front of the service would
pass them on.
"""

from __future__ import annotations

__all__ = ["CarrierLine", "Instruction", "read_instruction", "ring_carrier"]

import secrets
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from adapters.call_simulator.script import Action, Caller
from adapters.call_simulator.session import CallReport, Clock, Ear, converse
from core.carrier_media import (
    AudioArrived,
    CarrierStreamClient,
    ClearArrived,
    ClientStreamState,
    MarkArrived,
)
from core.errors import RemoteProtocolError
from core.twilio_signature import compute_signature
from kernels.ulaw import lin2ulaw, ulaw2lin

VOICE_PATH = "/api/telephony/carrier/voice"
STATUS_PATH = "/api/telephony/carrier/status"
SIGNATURE_HEADER = "X-Twilio-Signature"


@dataclass
class Instruction:
    """What a TwiML answer tells the carrier to do."""

    verb: str  # "Connect", "Reject", "Dial", "Hangup" or "" for an empty answer
    action: str = ""
    stream_url: str = ""
    parameters: dict[str, str] = field(default_factory=dict)
    number: str = ""


def read_instruction(document: bytes) -> Instruction:
    """The first verb of a TwiML ``<Response>``; ``ValueError`` for anything else."""
    try:
        root = ET.fromstring(document)
    except ET.ParseError as exc:
        raise ValueError(f"the answer is not XML: {exc}") from None
    if root.tag != "Response":
        raise ValueError(f"the answer's root is <{root.tag}>, not <Response>")
    if len(root) == 0:
        return Instruction(verb="")
    verb = root[0]
    instruction = Instruction(verb=verb.tag)
    if verb.tag == "Connect":
        stream = verb.find("Stream")
        if stream is None or not stream.get("url"):
            raise ValueError("<Connect> without a <Stream url=…>")
        instruction.action = verb.get("action", "")
        instruction.stream_url = stream.get("url", "")
        instruction.parameters = {parameter.get("name", ""): parameter.get("value", "")
                                  for parameter in stream.findall("Parameter")}
    elif verb.tag == "Dial":
        instruction.number = (verb.text or "").strip()
    return instruction


def relay(url: str, public_base: str, server_url: str) -> str:
    """Where a request for the public ``url`` goes: the same path under
    ``server_url`` (``ws``/``wss`` kept for WebSocket addresses)."""
    public_path = urlsplit(public_base).path.rstrip("/")
    parts = urlsplit(url)
    path = parts.path[len(public_path):] if parts.path.startswith(public_path) else parts.path
    server = urlsplit(server_url)
    scheme = server.scheme
    if parts.scheme in ("ws", "wss"):
        scheme = "wss" if server.scheme == "https" else "ws"
    return urlunsplit((scheme, server.netloc, server.path.rstrip("/") + path, parts.query, ""))


class CarrierLine:
    """The media WebSocket of one call, as ``converse`` drives it."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse, client: CarrierStreamClient,
                 report: CallReport) -> None:
        self.socket = socket
        self.client = client
        self.report = report

    async def flush(self) -> None:
        for message in self.client.data_to_send():
            await self.socket.send_str(message)

    async def send(self, action: Action, frame: bytes, digit: str, at_ms: int) -> None:
        # The line may have ended the stream since this frame was decided.
        if (action is Action.NOTHING or self.socket.closed
                or self.client.state is not ClientStreamState.STREAMING):
            return
        if action is Action.KEY:
            self.client.send_dtmf(digit)
        elif action is Action.FUTURE_EVENT:
            self.client.send_event(digit, {digit: {"track": "inbound"}})
        self.client.send_media(lin2ulaw(frame), at_ms)
        try:
            await self.flush()
        except (aiohttp.ClientError, ConnectionError):
            pass  # the line ended the stream; the reading side reports it

    def play(self) -> tuple[bytes, bytes]:
        played = self.client.play()
        return ulaw2lin(played.audio), ulaw2lin(played.line_audio)

    def drain(self) -> bytes:
        return ulaw2lin(self.client.playout.drain())

    async def receive(self, ear: Ear, clock: Clock) -> None:
        async for message in self.socket:
            try:
                if message.type == aiohttp.WSMsgType.TEXT:
                    self.client.receive_text(message.data)
                elif message.type == aiohttp.WSMsgType.BINARY:
                    self.client.receive_binary(message.data)
                elif message.type == aiohttp.WSMsgType.ERROR:
                    self.report.fault = f"the media WebSocket failed: {message.data}"
                    self.report.ended_by = "fault"
                    return
                else:
                    break
            except RemoteProtocolError as exc:
                self.report.fault = str(exc)
                self.report.ended_by = "fault"
                await self.socket.close(code=int(exc.hint or 1002))
                return
            for event in self.client.events_received():
                if isinstance(event, AudioArrived):
                    ear.arrived(clock.now(), ulaw2lin(event.ulaw),
                                odd=len(event.ulaw) != 160)
                elif isinstance(event, MarkArrived):
                    self.report.marks += 1
                elif isinstance(event, ClearArrived):
                    self.report.clears += 1

    async def hang_up(self) -> None:
        self.client.stop()
        try:
            await self.flush()
        finally:
            await self.socket.close()


def _webhook(call_sid: str, account_sid: str, caller_number: str, dialled: str,
             status: str) -> dict[str, str]:
    return {"CallSid": call_sid, "AccountSid": account_sid, "From": caller_number,
            "To": dialled, "CallStatus": status, "Direction": "inbound",
            "ApiVersion": "2010-04-01"}


async def _post(http: aiohttp.ClientSession, public_url: str, target: str,
                credential: str, params: dict[str, str]) -> tuple[int, bytes]:
    signature = compute_signature(credential, public_url, params)
    async with http.post(target, data=params, headers={SIGNATURE_HEADER: signature}) as answer:
        return answer.status, await answer.read()


async def ring_carrier(*, server_url: str, public_base: str | None, credential: str,
                       caller_number: str, dialled: str, caller: Caller,
                       http: aiohttp.ClientSession) -> CallReport:
    """Ring ``dialled`` from ``caller_number`` over the carrier transport and run
    ``caller``'s script on the call. ``public_base`` is the address the service is
    configured with (what the carrier signs); it defaults to ``server_url``."""
    report = CallReport(transport="carrier")
    public = (public_base or server_url).rstrip("/")
    call_sid = "CA" + secrets.token_hex(16)
    account_sid = "AC" + secrets.token_hex(16)
    ringing = _webhook(call_sid, account_sid, caller_number, dialled, "ringing")
    status, document = await _post(http, public + VOICE_PATH,
                                   relay(public + VOICE_PATH, public, server_url),
                                   credential, ringing)
    report.call_reference = call_sid
    if status != 200:
        report.ended_by = "refused"
        report.fault = f"the voice webhook answered HTTP {status}"
        return report
    try:
        instruction = read_instruction(document)
    except ValueError as exc:
        report.ended_by, report.fault = "fault", str(exc)
        return report
    if instruction.verb != "Connect":
        report.ended_by = "refused"
        report.fault = f"the voice webhook answered <{instruction.verb or 'Response/'}>"
        return report
    report.answered = True
    client = CarrierStreamClient(stream_sid="MZ" + secrets.token_hex(16), call_sid=call_sid,
                                 account_sid=account_sid,
                                 custom_parameters=instruction.parameters)
    async with http.ws_connect(relay(instruction.stream_url, public, server_url),
                               autoping=True, max_msg_size=1 << 20) as socket:
        line = CarrierLine(socket, client, report)
        await line.flush()
        await converse(line, caller, report)
    if report.ended_by in ("line", "fault") and instruction.action:
        after = _webhook(call_sid, account_sid, caller_number, dialled, "in-progress")
        status, document = await _post(http, instruction.action,
                                       relay(instruction.action, public, server_url),
                                       credential, after)
        following = read_instruction(document) if status == 200 else Instruction(verb="")
        report.transfer_to = following.number if following.verb == "Dial" else None
    completed = _webhook(call_sid, account_sid, caller_number, dialled, "completed")
    await _post(http, public + STATUS_PATH, relay(public + STATUS_PATH, public, server_url),
                credential, completed)
    return report
