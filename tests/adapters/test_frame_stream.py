"""The frame stream under the AudioSocket listener, over real sockets: bytes arrive whole
and in order, a reader that lags pauses the peer instead of buffering without bound,
and the peer's close is the end of the stream."""

from __future__ import annotations

import contextlib

import anyio
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


@pytest.mark.parametrize("reset", [False, True])
async def test_relayed_caller_audio_then_a_close_is_a_hangup_and_a_reset_a_broken_connection(
        reset):
    import socket
    import struct
    import uuid

    from adapters.voice.audiosocket import AudioSocketTransport
    from adapters.voice.transport import TransportBroken, relay_audio
    from core.audiosocket import AudioSocketConnection

    header = struct.Struct(">BH")
    heard: list[bytes] = []
    ending: list[str] = []
    done = anyio.Event()

    async def handle(stream: FrameStream) -> None:
        connection = AudioSocketConnection()
        connection.receive_data(await stream.receive())  # the identifier, maybe audio
        transport = AudioSocketTransport(stream, connection, connection.events_received()[1:])
        try:
            await relay_audio(transport, heard.append)
            ending.append("hung up")
        except TransportBroken:
            ending.append("broken")
        finally:
            await stream.aclose()
            done.set()

    with anyio.fail_after(20):
        async with serving(handle) as port:
            peer = await anyio.connect_tcp("127.0.0.1", port)
            await peer.send(header.pack(0x01, 16) + uuid.uuid4().bytes)
            for n in range(3):
                await peer.send(header.pack(0x10, 320) + bytes([n]) * 320)
            while len(heard) < 3:
                await anyio.sleep(0.01)
            if reset:  # SO_LINGER 0: the close sends a reset
                raw = peer.extra(anyio.abc.SocketAttribute.raw_socket)
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            await peer.aclose()
            await done.wait()
    assert heard == [bytes([n]) * 320 for n in range(3)]
    assert ending == ["broken" if reset else "hung up"]
