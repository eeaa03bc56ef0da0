"""The two transports as a session sees them, over in-memory peers: what goes on the
wire per frame, marks and clear on the carrier, the peer's endings (spec: telephony.md
"Pbx ticket", "Limits"; DESIGN.md "Carrier", "Pbx")."""

from __future__ import annotations

import contextlib
import json
import socket
import struct
from base64 import b64decode
import uuid

import anyio
import pytest
from anyio.abc import SocketAttribute

from adapters.voice.audiosocket import (
    AudioSocketTransport,
    bind_audiosocket,
    serve_audiosocket,
    serve_audiosockets,
)
from adapters.voice.carrier import PLAYOUT_LEAD_FRAMES, CarrierTransport, serve_carrier_stream
from adapters.voice.transport import CallTransport, TransportBroken
from core.audiosocket import AudioSocketConnection
from core.carrier_media import CarrierConnection
from kernels.ulaw import lin2ulaw
from tests.support.listener import free_port

pytestmark = pytest.mark.anyio

HEADER = struct.Struct(">BH")
FRAME = bytes(range(256)) + bytes(64)  # 320 bytes


class RecordingStream:
    """A byte stream that keeps each ``send`` apart and reads from a script."""

    def __init__(self, incoming: list[bytes]) -> None:
        self.incoming = list(incoming)
        self.sends: list[bytes] = []
        self.closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self.incoming:
            raise anyio.EndOfStream
        return self.incoming.pop(0)

    async def send(self, data: bytes) -> None:
        self.sends.append(bytes(data))

    async def aclose(self) -> None:
        self.closed = True

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()


def introduced() -> AudioSocketConnection:
    connection = AudioSocketConnection()
    connection.receive_data(HEADER.pack(0x01, 16) + uuid.uuid4().bytes)
    connection.events_received()
    return connection


async def test_audiosocket_sends_one_whole_audio_frame_per_send_and_ends_with_a_hangup():
    stream = RecordingStream([])
    transport = AudioSocketTransport(stream, introduced())
    for _ in range(3):
        await transport.send_frame(FRAME)
    await transport.end_of_speech(0)
    await transport.stop_playback()  # nothing to say on the wire
    await transport.hang_up()
    assert stream.sends == [HEADER.pack(0x10, 320) + FRAME] * 3 + [HEADER.pack(0x00, 0)]
    assert stream.closed


async def test_audiosocket_caller_audio_keys_and_hangup():
    frames = (HEADER.pack(0x10, 4) + b"\x01\x00\x02\x00" + HEADER.pack(0x03, 1) + b"5"
              + HEADER.pack(0x10, 2))
    stream = RecordingStream([frames[:5], frames[5:] + b"\x03\x00", HEADER.pack(0x00, 0)])
    transport = AudioSocketTransport(stream, introduced())
    assert await transport.receive() == b"\x01\x00\x02\x00"
    assert await transport.receive() == "5"  # the key press, handed on
    assert await transport.receive() == b"\x03\x00"
    assert await transport.receive() is None  # the hangup frame
    await transport.send_frame(FRAME)  # nothing is played to a caller who has gone
    assert stream.sends == []


@pytest.mark.parametrize("ending, broken, our_reply", [
    # "hangup of calling party": an ordinary end.
    (HEADER.pack(0xFF, 1) + b"\x01", False, []),
    # A memory error: the telephone system stops carrying the call; it broke.
    (HEADER.pack(0xFF, 1) + b"\x04", True, []),
    # A kind that does not exist: the peer broke the protocol, we hang up.
    (HEADER.pack(0x42, 0), True, [HEADER.pack(0x00, 0)]),
])
async def test_audiosocket_errors_from_the_telephone_system(ending, broken, our_reply):
    stream = RecordingStream([ending])
    transport = AudioSocketTransport(stream, introduced())
    if broken:
        with pytest.raises(TransportBroken):
            await transport.receive()
    else:
        assert await transport.receive() is None
    assert stream.sends == our_reply


@pytest.mark.parametrize(("kind", "rate"), [(0x11, 12000), (0x12, 16000), (0x13, 24000),
                                            (0x14, 32000), (0x15, 44100), (0x16, 48000),
                                            (0x17, 96000), (0x18, 192000)])
async def test_audiosocket_higher_rate_audio_comes_to_8_khz_and_we_answer_in_its_kind(
        kind, rate):
    twenty_ms = rate // 50 * 2
    stream = RecordingStream([HEADER.pack(kind, twenty_ms) + bytes(twenty_ms)] * 10)
    transport = AudioSocketTransport(stream, introduced())
    heard = b"".join([await transport.receive() for _ in range(10)])
    assert abs(len(heard) - 10 * 320) <= 4  # the filters' delay, no more
    await transport.send_frame(FRAME)
    [sent] = stream.sends
    assert HEADER.unpack(sent[:3]) == (kind, twenty_ms)


async def test_audiosocket_peer_closing_the_socket_is_a_hangup():
    transport = AudioSocketTransport(RecordingStream([]), introduced())
    assert await transport.receive() is None


@pytest.mark.parametrize("first", [
    HEADER.pack(0x10, 320) + bytes(320),  # audio before the identifier
    HEADER.pack(0x01, 4) + b"abcd",  # an identifier that is not a UUID
    b"",  # closed at once
])
async def test_audiosocket_connection_that_does_not_introduce_a_call_is_closed_silently(first):
    stream = RecordingStream([first] if first else [])
    redeemed: list[str] = []

    async def redeem(token: str):
        redeemed.append(token)
        return object()

    async def answer(transport, call):
        raise AssertionError("no call may start")

    await serve_audiosocket(stream, redeem, answer)
    assert stream.sends == [] and stream.closed and redeemed == []


async def test_audiosocket_identifier_is_redeemed_as_uuid_text_and_a_refusal_says_nothing():
    call_id = uuid.uuid4()
    stream = RecordingStream([HEADER.pack(0x01, 16) + call_id.bytes])
    redeemed: list[str] = []

    async def redeem(token: str):
        redeemed.append(token)
        return None

    await serve_audiosocket(stream, redeem, None)  # type: ignore[arg-type]
    assert redeemed == [str(call_id)]
    assert stream.sends == [] and stream.closed


# -- the carrier


class TextPeer:
    """The carrier's end of a media WebSocket, scripted."""

    def __init__(self, incoming: list[str | bytes]) -> None:
        self.incoming = list(incoming)
        self.sent: list[dict] = []
        self.closed_with: int | None = None

    async def receive(self) -> str | bytes | None:
        if not self.incoming:
            return None
        return self.incoming.pop(0)

    async def send_text(self, text: str) -> None:
        self.sent.append(json.loads(text))

    async def close(self, code: int = 1000) -> None:
        if self.closed_with is None:  # a WebSocket closes once; later closes do nothing
            self.closed_with = code


def start(ticket: str | None = "t-1") -> str:
    return json.dumps({"event": "start", "streamSid": "MZ1", "start": {
        "streamSid": "MZ1", "accountSid": "AC1", "callSid": "CA1", "tracks": ["inbound"],
        "customParameters": {"ticket": ticket} if ticket else {},
        "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}})


def mark(name: str) -> str:
    return json.dumps({"event": "mark", "streamSid": "MZ1", "mark": {"name": name}})


def streaming() -> CarrierConnection:
    connection = CarrierConnection()
    connection.receive_text(start())
    connection.events_received()
    return connection


def carrier(peer: TextPeer) -> CarrierTransport:
    """A started stream whose utterances do not wait for their marks (nothing reads)."""
    transport = CarrierTransport(peer, streaming())
    transport.mark_wait_seconds = 0
    return transport


async def test_carrier_frames_are_mulaw_media_each_utterance_ends_with_a_mark():
    peer = TextPeer([])
    transport = carrier(peer)
    await transport.send_frame(FRAME)
    await transport.end_of_speech(0)
    media, end = peer.sent
    assert media["event"] == "media" and media["streamSid"] == "MZ1"
    assert b64decode(media["media"]["payload"]) == lin2ulaw(FRAME)
    assert end["event"] == "mark"


async def test_carrier_barge_in_clears_and_marks_returned_after_it_count_as_cleared():
    peer = TextPeer([])
    transport = carrier(peer)
    await transport.send_frame(FRAME)
    await transport.end_of_speech(0)  # the opening, played
    first = peer.sent[-1]["mark"]["name"]
    await transport.send_frame(FRAME)
    await transport.end_of_speech(1)  # an answer, still queued at the carrier
    second = peer.sent[-1]["mark"]["name"]
    peer.incoming = [mark(first)]
    await transport.stop_playback()
    assert peer.sent[-1] == {"event": "clear", "streamSid": "MZ1"}
    peer.incoming += [mark(second), json.dumps({"event": "stop", "streamSid": "MZ1",
                                                "stop": {"accountSid": "AC1", "callSid": "CA1"}})]
    assert await transport.receive() is None  # the stop: the caller hung up
    # The first mark came back after the clear too, but it had been sent before it:
    # both were cleared as far as the carrier's queue is concerned.
    assert (transport.marks_heard, transport.marks_cleared) == (0, 2)


async def test_carrier_keys_unknown_events_and_strange_marks_never_end_the_call():
    peer = TextPeer([
        json.dumps({"event": "dtmf", "streamSid": "MZ1",
                    "dtmf": {"track": "inbound_track", "digit": "4"}}),
        json.dumps({"event": "transcription", "streamSid": "MZ1", "text": "hi"}),
        mark("never-sent"),
        json.dumps({"event": "media", "streamSid": "MZ1", "media": {
            "track": "inbound", "chunk": "1", "timestamp": "20", "payload": "/w=="}}),
    ])
    transport = carrier(peer)
    assert await transport.receive() == "4"
    assert await transport.receive() == b"\x00\x00"  # μ-law 0xff: silence
    assert peer.closed_with is None


async def test_carrier_mark_returned_before_a_clear_was_heard():
    peer = TextPeer([])
    transport = carrier(peer)
    await transport.send_frame(FRAME)
    await transport.end_of_speech(0)
    peer.incoming = [mark(peer.sent[-1]["mark"]["name"])]
    with pytest.raises(TransportBroken):  # then the socket closes without a stop
        await transport.receive()
    assert (transport.marks_heard, transport.marks_cleared) == (1, 0)


@pytest.mark.parametrize("messages", [
    [],  # closed at once
    [json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}), start(None)],
    ["not json"],
    [b"binary"],
])
async def test_carrier_stream_without_a_ticket_is_closed_without_a_word(messages):
    peer = TextPeer(messages)

    async def redeem(token: str):
        raise AssertionError("nothing to redeem")

    await serve_carrier_stream(peer, redeem, None)  # type: ignore[arg-type]
    assert peer.sent == [] and peer.closed_with == 1008


async def test_carrier_ticket_is_redeemed_and_the_call_runs_over_the_stream():
    peer = TextPeer([start("t-42"), mark("never-sent"), "not json"])
    answered: list[object] = []

    async def redeem(token: str):
        return {"ticket": token}

    async def answer(transport, call):
        answered.append(call)
        with pytest.raises(TransportBroken):  # a mark we never sent is passed over;
            await transport.receive()  # a message that is not JSON breaks the protocol

    await serve_carrier_stream(peer, redeem, answer)
    assert answered == [{"ticket": "t-42"}]
    assert peer.closed_with == 1002


class SilentPeer(TextPeer):
    """Connects and then says nothing."""

    async def receive(self) -> str | bytes | None:
        await anyio.sleep_forever()


async def test_carrier_stream_whose_start_does_not_come_within_five_seconds_is_closed():
    peer = SilentPeer([])
    with anyio.fail_after(10):
        await serve_carrier_stream(peer, None, None)  # type: ignore[arg-type]
    assert peer.sent == [] and peer.closed_with == 1008


async def test_carrier_utterance_ends_when_its_mark_comes_back():
    peer = TextPeer([])
    transport = CarrierTransport(peer, streaming())
    ended = anyio.Event()

    async def speak() -> None:
        await transport.send_frame(FRAME)
        await transport.end_of_speech(0)
        ended.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(speak)
            while not peer.sent or peer.sent[-1]["event"] != "mark":
                await anyio.sleep(0.01)
            assert not ended.is_set()  # the carrier has not played it yet
            peer.incoming = [mark(peer.sent[-1]["mark"]["name"]), start()]
            with pytest.raises(TransportBroken):  # the second start breaks the protocol
                await transport.receive()
            await ended.wait()
    assert transport.marks_heard == 1


@contextlib.asynccontextmanager
async def serving_audiosockets(redeem, answer):
    """A listener on a free loopback port that hands each call to ``redeem`` and
    ``answer``; yields its port and stops listening on leaving (within ten seconds)."""
    listener = await bind_audiosocket(f"127.0.0.1:{free_port()}")
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(serve_audiosockets, listener, redeem, answer)
            yield listener.extra(SocketAttribute.local_port)
            tasks.cancel_scope.cancel()


async def redeem_any(token: str):
    return token


async def test_the_listener_sets_tcp_nodelay_on_every_call():
    seen: list[int] = []

    async def answer(transport, call):
        raw = transport.stream.extra(SocketAttribute.raw_socket)
        seen.append(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        await transport.hang_up()

    async with serving_audiosockets(redeem_any, answer) as port:
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(HEADER.pack(0x01, 16) + uuid.uuid4().bytes)
            assert await stream.receive() == HEADER.pack(0x00, 0)  # our hangup
    assert seen == [1]


async def test_a_failing_call_does_not_take_the_listener_down():
    calls = 0

    async def redeem(token: str):
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError("the ticket store is unreachable")
        return token

    async def answer(transport, call):
        await transport.hang_up()

    async with serving_audiosockets(redeem, answer) as port:
        for expected in (b"", HEADER.pack(0x00, 0)):  # closed silently, then answered
            async with await connect_presenting_an_identifier(port) as stream:
                assert await read_all(stream) == expected


async def test_a_call_still_being_prepared_keeps_asterisk_from_giving_up():
    async def answer(transport, call):
        await anyio.sleep(1.5)  # a slow start: the line, the engines, the transcript
        await transport.hang_up()

    async with serving_audiosockets(redeem_any, answer) as port:
        async with await connect_presenting_an_identifier(port) as stream:
            data = await read_all(stream)
    silence = HEADER.pack(0x10, 320) + bytes(320)
    assert data.endswith(HEADER.pack(0x00, 0))
    body = data[:-3]
    assert body == silence * (len(body) // len(silence)) and len(body) // len(silence) >= 20


async def connect_presenting_an_identifier(port: int):
    stream = await anyio.connect_tcp("127.0.0.1", port)
    await stream.send(HEADER.pack(0x01, 16) + uuid.uuid4().bytes)
    return stream


async def read_all(stream) -> bytes:
    data = b""
    try:
        while True:
            data += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        return data


async def test_a_failing_carrier_call_closes_its_stream_and_says_nothing_more():
    peer = TextPeer([start("t-1")])

    async def redeem(token: str):
        raise OSError("the ticket store is unreachable")

    await serve_carrier_stream(peer, redeem, None)  # type: ignore[arg-type]
    assert peer.sent == [] and peer.closed_with == 1008


# -- what each transport declares of its fast paths


async def test_the_carrier_declares_its_lead_and_keeps_the_plain_relay_and_sending():
    peer = TextPeer([
        json.dumps({"event": "media", "streamSid": "MZ1", "media": {
            "track": "inbound", "chunk": "1", "timestamp": "20", "payload": "/w=="}}),
        json.dumps({"event": "dtmf", "streamSid": "MZ1",
                    "dtmf": {"track": "inbound_track", "digit": "7"}}),
        json.dumps({"event": "stop", "streamSid": "MZ1",
                    "stop": {"accountSid": "AC1", "callSid": "CA1"}}),
    ])
    transport = carrier(peer)
    assert isinstance(transport, CallTransport)
    assert transport.lead_frames == PLAYOUT_LEAD_FRAMES and not transport.keeps_line_busy
    assert transport.frame_writer() is None  # the player's task awaits send_frame
    heard: list[bytes | str] = []
    await transport.relay(heard.append, heard.append)  # read with receive, to the stop
    assert heard == [b"\x00\x00", "7"]


async def test_audiosocket_over_a_plain_stream_keeps_the_plain_relay_and_sending():
    audio = HEADER.pack(0x10, 320) + FRAME
    stream = RecordingStream([audio + HEADER.pack(0x03, 1) + b"#", audio])
    transport = AudioSocketTransport(stream, introduced())
    assert isinstance(transport, CallTransport) and transport.keeps_line_busy
    assert transport.lead_frames == 0
    assert transport.frame_writer() is None  # only a frame stream writes without waiting
    heard: list[bytes | str] = []
    await transport.relay(heard.append, heard.append)  # read with receive, to the close
    assert heard == [FRAME, "#", FRAME]


def test_a_transport_must_answer_every_call_a_session_makes():
    class Mute(CallTransport):
        async def receive(self) -> None:
            return None

        async def send_frame(self, pcm: bytes) -> None: ...

        async def end_of_speech(self, utterance: int) -> None: ...

        async def stop_playback(self) -> None: ...

    with pytest.raises(TypeError, match="hang_up"):
        Mute()  # type: ignore[abstract]
