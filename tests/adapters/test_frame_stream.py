"""The frame stream under the AudioSocket listener, over real sockets: bytes arrive whole
and in order, a reader that lags pauses the peer instead of buffering without bound,
and the peer's close is the end of the stream."""

from __future__ import annotations

import contextlib
import socket
import struct
import uuid
from collections.abc import AsyncIterator

import anyio
import anyio.abc
import pytest

from adapters.voice.frame_stream import READ_BUFFER_LIMIT, FrameStream, serve_frame_streams

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def serving(handle):
    """Frame streams served on a local port (yielded) while the block runs."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    raw = listener.extra(anyio.abc.SocketAttribute.raw_socket)
    async with listener, anyio.create_task_group() as tasks:
        tasks.start_soon(serve_frame_streams, [raw], handle)
        yield port
        tasks.cancel_scope.cancel()


async def test_a_lagging_reader_pauses_the_peer_and_still_gets_every_byte_in_order():
    sent = bytes(range(256)) * (4 * 1024)  # 1 MiB, far beyond the read buffer
    received = bytearray()
    peak = 0
    done = anyio.Event()

    async def handle(stream: FrameStream) -> None:
        nonlocal peak
        protocol = stream._protocol
        while not protocol.reading_paused:  # nobody reads yet: the buffer fills up
            await anyio.sleep(0.01)
        peak = protocol.buffered
        async with stream:
            while True:
                try:
                    received.extend(await stream.receive())
                except anyio.EndOfStream:
                    break
        done.set()

    with anyio.fail_after(20):
        async with serving(handle) as port:
            async with await anyio.connect_tcp("127.0.0.1", port) as peer:
                await peer.send(sent)
                await peer.send_eof()
                await done.wait()
    assert READ_BUFFER_LIMIT <= peak < READ_BUFFER_LIMIT + 256 * 1024
    assert bytes(received) == sent


async def test_writes_reach_the_peer_whole_and_the_stream_ends_when_the_peer_closes():
    got: list[bytes] = []
    done = anyio.Event()

    async def handle(stream: FrameStream) -> None:
        async with stream:
            got.append(await stream.receive())
            for n in range(3):
                await stream.send(bytes([n]) * 320)
            with pytest.raises(anyio.EndOfStream):
                await stream.receive()
        done.set()

    with anyio.fail_after(20):
        async with serving(handle) as port:
            async with await anyio.connect_tcp("127.0.0.1", port) as peer:
                await peer.send(b"hello")
                heard = bytearray()
                while len(heard) < 960:
                    heard.extend(await peer.receive())
                await peer.send_eof()
                await done.wait()
    assert got == [b"hello"]
    assert bytes(heard) == bytes(320) + bytes([1]) * 320 + bytes([2]) * 320


AUDIOSOCKET_HEADER = struct.Struct(">BH")


class RelayedCall:
    """The peer of one AudioSocket call whose caller audio is relayed into ``heard``;
    ``ending`` says how the relay ended and how much had been heard by then."""

    def __init__(self) -> None:
        self.heard: list[bytes] = []
        self.ending: list[str] = []
        self.done = anyio.Event()
        self.peer: anyio.abc.SocketStream | None = None
        self.writes_at_once = False  # the transport's fast paths, over a frame stream

    async def handle(self, stream: FrameStream) -> None:
        from adapters.voice.audiosocket import AudioSocketTransport
        from adapters.voice.transport import TransportBroken
        from core.audiosocket import AudioSocketConnection

        connection = AudioSocketConnection()
        connection.receive_data(await stream.receive())  # the identifier, maybe audio
        transport = AudioSocketTransport(stream, connection, connection.events_received()[1:])
        self.writes_at_once = transport.frame_writer() is not None
        try:
            await transport.relay(self.heard.append)
            self.ending.append(f"hung up after {len(self.heard)} frames")
        except TransportBroken:
            self.ending.append(f"broken after {len(self.heard)} frames")
        finally:
            await stream.aclose()
            self.done.set()


@contextlib.asynccontextmanager
async def relayed_call() -> AsyncIterator[RelayedCall]:
    call = RelayedCall()
    with anyio.fail_after(20):
        async with serving(call.handle) as port:
            call.peer = await anyio.connect_tcp("127.0.0.1", port)
            await call.peer.send(AUDIOSOCKET_HEADER.pack(0x01, 16) + uuid.uuid4().bytes)
            yield call


def audio_frame(number: int) -> bytes:
    return AUDIOSOCKET_HEADER.pack(0x10, 320) + bytes([number]) * 320


@pytest.mark.parametrize("reset", [False, True])
async def test_relayed_caller_audio_then_a_close_is_a_hangup_and_a_reset_a_broken_connection(
        reset):
    async with relayed_call() as call:
        for n in range(3):
            await call.peer.send(audio_frame(n))
        while len(call.heard) < 3:
            await anyio.sleep(0.01)
        if reset:  # SO_LINGER 0: the close sends a reset
            raw = call.peer.extra(anyio.abc.SocketAttribute.raw_socket)
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        await call.peer.aclose()
        await call.done.wait()
    assert call.heard == [bytes([n]) * 320 for n in range(3)]
    assert call.ending == ["broken after 3 frames" if reset else "hung up after 3 frames"]


async def test_relayed_caller_audio_comes_before_the_hangup_that_follows_it():
    """Audio is handed over at the shared ticker's next ring; a hangup read with it
    still comes after all of it."""
    async with relayed_call() as call:
        await anyio.sleep(0.05)  # the identifier read alone, the hand-over begun
        await call.peer.send(b"".join(audio_frame(n) for n in range(5))
                             + AUDIOSOCKET_HEADER.pack(0x00, 0))
        await call.done.wait()
        await call.peer.aclose()
    assert call.heard == [bytes([n]) * 320 for n in range(5)]
    assert call.ending == ["hung up after 5 frames"]
    assert call.writes_at_once
