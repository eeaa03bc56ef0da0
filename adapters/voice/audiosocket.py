"""The pbx transport: Asterisk's AudioSocket over TCP, and the listener that takes it.

``bind_audiosocket`` binds ``telephony.pbx_listen`` (once, at process start) and
``serve_audiosockets`` accepts connections on it until cancelled, one task each (on
asyncio as ``frame_stream.FrameStream``s, made for many small frames).
``serve_audiosocket`` handles one connection: the identifier frame must arrive
within 5 seconds and redeem as a ticket, else the connection is closed without a word
(spec: telephony.md "Pbx ticket", "Limits"); then ``answer`` runs the call over an
``AudioSocketTransport``. Only so many connections may wait for their identifier at
once (``WaitingRoom``); one past that is closed without a word as it comes.

What we send (spec and Asterisk's res_audiosocket): only audio frames of 20 ms, paced
every 20 ms by the session's player, one ``send`` per frame, on a socket with
``TCP_NODELAY``; never an empty audio frame and never an error frame; we end with a
hangup frame (0x00) and close. The frame rules themselves are ``core.audiosocket``.

Audio comes in the kind of the channel's rate: 0x10 (8 kHz) from the AudioSocket
application, the higher-rate kinds (0x11 slin12 … 0x18 slin192) from the channel
driver. The session works at 8 kHz: caller audio at another rate is resampled to it,
and ours is resampled to the caller's rate and sent in the caller's kind. Keys (0x03)
are handed on as they come. Asterisk gives up on a connection that sends nothing for
2 seconds, so the player keeps the line busy with silence while the agent is quiet
(``keeps_line_busy``).
"""

from __future__ import annotations

__all__ = [
    "IDENTIFY_SECONDS",
    "UNIDENTIFIED_AT_ONCE",
    "UNIDENTIFIED_PER_SOURCE",
    "AudioSocketTransport",
    "WaitingRoom",
    "bind_audiosocket",
    "serve_audiosocket",
    "serve_audiosockets",
]

import logging
import socket
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import sniffio
from anyio.abc import ByteStream, SocketAttribute, SocketListener, SocketStream
from anyio.streams.stapled import MultiListener

from adapters.voice.frame_stream import FrameStream, serve_frame_streams
from adapters.voice.pacing import frame_ticker
from adapters.voice.relay import HandOver
from adapters.voice.transport import (LINE_RATE, CallTransport, FrameWriter, TransportBroken,
                                      ignore_key, pull_audio)
from core.audiosocket import (
    AUDIO_FRAME_BYTES,
    AudioReceived,
    AudioSocketConnection,
    ConnectionState,
    DtmfReceived,
    ErrorReceived,
    Event,
    HangupReceived,
    IdentifierReceived,
    SendAudio,
    SendHangup,
    frame_bytes,
)
from core.errors import RemoteProtocolError
from core.host_port import parse_host_port
from kernels.resample import Resampler

log = logging.getLogger("svc.voice.audiosocket")

# spec: telephony.md "Limits" — "Identifier not presented on connecting: 5 seconds".
IDENTIFY_SECONDS = 5.0
#: Connections waiting for their identifier at once, from one address and from all:
#: beyond either the next is closed without a word. Asterisk introduces a call in
#: its first frame, so its connections wait a moment each; a stranger's that never
#: introduce themselves cannot pile up sockets and memory past these.
UNIDENTIFIED_PER_SOURCE = 32
UNIDENTIFIED_AT_ONCE = 256
READ_BYTES = 65536

CallT = TypeVar("CallT")

# The errors of a connection that went away under us.
_STREAM_ERRORS = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


async def bind_audiosocket(address: str) -> SocketListener:
    """Bind the listen address (``core.host_port`` rules); raises ``InvalidHostPort``
    or ``OSError``."""
    host, port = parse_host_port(address)
    listener = await anyio.create_tcp_listener(local_host=host, local_port=port,
                                               reuse_port=False)
    return listener  # type: ignore[return-value]


async def serve_audiosockets(listener: SocketListener,
                             redeem: Callable[[str], Awaitable[CallT | None]],
                             answer: Callable[[CallTransport, CallT], Awaitable[None]]) -> None:
    """Accept connections until cancelled; each runs ``serve_audiosocket``."""

    waiting = WaitingRoom()

    async def handle(stream: SocketStream) -> None:
        raw = stream.extra(SocketAttribute.raw_socket, None)
        if raw is not None and raw.family in (socket.AF_INET, socket.AF_INET6):
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await serve_audiosocket(stream, redeem, answer, waiting)
        except Exception:
            # One call's fault (the ticket store unreachable, a bug) must not take the
            # listener, and every other call on it, down.
            log.exception("an AudioSocket call failed")

    async with listener:
        if sniffio.current_async_library() != "asyncio":
            await listener.serve(handle)
            return
        # On asyncio the connections are frame streams: no task switch per frame sent
        # and no system calls per frame received beyond the read itself.
        listeners = listener.listeners if isinstance(listener, MultiListener) else [listener]
        await serve_frame_streams([each.extra(SocketAttribute.raw_socket)
                                   for each in listeners], handle)


#: Admitted calls whose session has not yet started playing (preparing: the line, the
#: engines, the transcript) get silence from this long after admission on, so a slow
#: start never meets Asterisk's 2-second no-activity timeout.
QUIET_START_SECONDS = 0.5

# Above 44.1 kHz caller audio comes down by halves, then 24 -> 8 kHz (the resampler's
# filters: ``kernels._resample_design``).
_DOWN_STEPS = {48000: (24000,), 96000: (48000, 24000), 192000: (96000, 48000, 24000)}


class _ToLineRate:
    """Caller audio at ``rate`` brought to the session's 8 kHz, in as many steps as
    the resampler's filters need."""

    def __init__(self, rate: int) -> None:
        rates = (rate, *_DOWN_STEPS.get(rate, ()), LINE_RATE)
        self._steps = [Resampler(a, b) for a, b in zip(rates, rates[1:])]

    def process(self, pcm: bytes) -> bytes:
        for step in self._steps:
            pcm = step.process(pcm)
        return pcm


class AudioSocketTransport(CallTransport):
    """One introduced AudioSocket connection, as a ``CallTransport``. Over a frame
    stream (asyncio) it has both fast paths, ``relay`` and ``frame_writer``; over any
    other byte stream it reads and writes by awaiting."""

    #: Asterisk hangs up after 2 s without a frame: the player fills quiet with silence.
    keeps_line_busy = True

    def __init__(self, stream: ByteStream, connection: AudioSocketConnection,
                 pending: list[Event] | None = None) -> None:
        self.stream = stream
        #: The same stream when it reads in a callback and writes without waiting.
        self._direct = stream if isinstance(stream, FrameStream) else None
        self.connection = connection
        self._pending: deque[Event] = deque(pending or ())
        self._fault: RemoteProtocolError | None = None  # the peer's, not yet raised
        self.frames_sent = 0
        # Caller audio at another rate than the session's, and ours to the caller's.
        self._from_peer: dict[int, _ToLineRate] = {}
        self._to_peer: tuple[int, Resampler] | None = None
        self._waiting: _QuietStart | None = None

    def keep_busy_until_played(self) -> None:
        """Send silence while the call is prepared, until the player takes the line
        (``frame_writer``, ``send_frame``) or the call ends. Only on a frame stream
        under asyncio: elsewhere the player's own silence is all there is."""
        if self._direct is None or sniffio.current_async_library() != "asyncio":
            return
        self._waiting = _QuietStart(self, self._direct.write_now)

    def _played(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            waiting.leave()

    def _caller_item(self, event: AudioReceived | DtmfReceived) -> bytes | str:
        """Caller audio at the session's rate, or the key pressed."""
        if type(event) is DtmfReceived:
            return event.digit
        return self._at_line_rate(event.pcm, event.rate)

    def _at_line_rate(self, pcm: bytes, rate: int) -> bytes:
        if rate == LINE_RATE:
            return pcm
        resampler = self._from_peer.get(rate)
        if resampler is None:
            resampler = self._from_peer[rate] = _ToLineRate(rate)
        return resampler.process(pcm)

    def _peer_frame(self, pcm: bytes) -> bytes:
        """One of our 8 kHz frames at the caller's rate (20 ms, whole)."""
        rate = self.connection.rate
        if rate == LINE_RATE:
            return pcm
        if self._to_peer is None or self._to_peer[0] != rate:
            self._to_peer = (rate, Resampler(LINE_RATE, rate))
        out = self._to_peer[1].process(pcm)
        size = frame_bytes(rate)
        # 160 samples at 8 kHz make a whole number at every AudioSocket rate, so this
        # only guards against a resampler that delays a sample.
        return out[:size] if len(out) >= size else out.ljust(size, b"\0")

    async def receive(self) -> bytes | str | None:
        while True:
            while self._pending:
                event = self._pending.popleft()
                if isinstance(event, (AudioReceived, DtmfReceived)):
                    return self._caller_item(event)
                if isinstance(event, HangupReceived):
                    return None
                if isinstance(event, ErrorReceived):
                    if event.caller_hung_up:
                        return None
                    raise TransportBroken(f"the telephone system reported error {event.code!r}")
            await self._read()

    async def relay(self, on_audio: Callable[[bytes], None],
                    on_key: Callable[[str], None] = ignore_key) -> None:
        """On a frame stream each chunk is parsed in the stream's read callback and
        the caller's audio and keys go on at the next ring of the shared ticker
        (``relay.HandOver``). Anything else (a hangup, an error, a broken protocol)
        ends the hand-over, after the audio before it was given, and is taken as
        ``receive`` takes it."""
        if self._direct is not None:
            hand_over = HandOver(self._direct, frame_ticker(), self._read_chunk,
                                 on_audio, on_key)
            if self._give_audio(hand_over.deliver):
                await hand_over.run()
            await self._raise_fault()
        # What ended the hand-over, as receive takes it; or the whole call, by reading.
        await pull_audio(self, on_audio, on_key)

    def _read_chunk(self, data: bytes, hold: Callable[[bytes | str], None]) -> bool:
        """``relay.ReadChunk``: parse ``data``; True when only audio and keys came."""
        if not self._pending:
            # Most reads are one whole frame of audio: taken without events.
            connection = self.connection
            pcm = connection.audio_in(data)
            if pcm is not None:
                hold(pcm if connection.rate == LINE_RATE
                     else self._at_line_rate(pcm, connection.rate))
                return True
        self._parse(data)
        return self._fault is None and self._give_audio(hold)

    def _give_audio(self, deliver: Callable[[bytes | str], None]) -> bool:
        """Hand the leading audio and key events over; True when nothing else waits."""
        pending = self._pending
        while pending and type(pending[0]) in (AudioReceived, DtmfReceived):
            deliver(self._caller_item(pending.popleft()))  # type: ignore[arg-type]
        return not pending

    async def _read(self) -> None:
        try:
            data = await self.stream.receive(READ_BYTES)
        except anyio.EndOfStream:
            data = b""  # the peer closed: a hangup
        except _STREAM_ERRORS as exc:
            raise TransportBroken(f"the audio connection failed: {exc}") from None
        self._parse(data)
        await self._raise_fault()

    def _parse(self, data: bytes) -> None:
        try:
            self.connection.receive_data(data)
        except RemoteProtocolError as exc:
            self._fault = exc
        self._pending.extend(self.connection.events_received())

    async def _raise_fault(self) -> None:
        fault, self._fault = self._fault, None
        if fault is not None:
            await self._write(self.connection.data_to_send())  # our hangup, when due
            raise TransportBroken(f"the telephone system broke the protocol: {fault}") from None

    async def _write(self, data: bytes) -> None:
        if not data:
            return
        try:
            await self.stream.send(data)
        except _STREAM_ERRORS as exc:
            raise TransportBroken(f"the audio connection cannot be written: {exc}") from None

    async def send_frame(self, pcm: bytes) -> None:
        self._played()
        if self.connection.state is not ConnectionState.OPEN:
            return  # the caller is gone; nothing more is played
        self.connection.send(SendAudio(self._peer_frame(pcm)))
        await self._write(self.connection.data_to_send())  # one send per frame
        self.frames_sent += 1

    def frame_writer(self) -> FrameWriter | None:
        """None when the stream cannot write without waiting (only frame streams can)."""
        self._played()
        if self._direct is None:
            return None
        write_now = self._direct.write_now
        connection = self.connection

        def write_frame(pcm: bytes) -> bool:
            if connection.rate != LINE_RATE:
                pcm = self._peer_frame(pcm)
            # Nearly every frame: laid out at once, nothing queued in the connection.
            data = connection.audio_out(pcm)
            if data is None:
                if connection.state is not ConnectionState.OPEN:
                    return True  # the caller is gone; nothing more is played
                connection.send(SendAudio(pcm))
                data = connection.data_to_send()
            try:
                written = write_now(data)  # one send per frame
            except _STREAM_ERRORS as exc:
                raise TransportBroken(f"the audio connection cannot be written: {exc}") from None
            if written:  # else the frame is kept for a later slot (audio changes no state)
                self.frames_sent += 1
            return written

        return write_frame

    async def end_of_speech(self, utterance: int) -> None:
        """AudioSocket has no marks: a frame sent is a frame played."""

    async def stop_playback(self) -> None:
        """Nothing is queued beyond the frame just sent: stopping the player is enough."""

    async def hang_up(self) -> None:
        self._played()
        if self.connection.state in (ConnectionState.OPEN, ConnectionState.PEER_HUNG_UP):
            self.connection.send(SendHangup())
            try:
                await self._write(self.connection.data_to_send())
            except TransportBroken:
                pass  # gone already: the end is the same
        await self.stream.aclose()


class _QuietStart:
    """A member of the shared ticker that keeps a just-admitted call's line busy with
    silence (``QUIET_START_SECONDS`` after admission on) until the player takes over."""

    def __init__(self, transport: AudioSocketTransport,
                 write_now: Callable[[bytes], bool]) -> None:
        self._transport = transport
        self._write_now = write_now
        self._ticker = frame_ticker()
        self._from = self._ticker.clock() + QUIET_START_SECONDS
        self._ticker.join(self)
        self._ticker.wake()

    def on_tick(self) -> bool:
        if self._ticker.clock() < self._from:
            return True
        connection = self._transport.connection
        if connection.state is not ConnectionState.OPEN:
            self.leave()
            return False
        connection.send(SendAudio(self._transport._peer_frame(bytes(AUDIO_FRAME_BYTES))))
        try:
            self._write_now(connection.data_to_send())
        except _STREAM_ERRORS:
            self.leave()
            return False
        return True

    def tick_failed(self, exc: Exception) -> None:
        pass  # already left the ring

    def leave(self) -> None:
        self._ticker.leave(self)


async def _await_identifier(stream: ByteStream, connection: AudioSocketConnection
                            ) -> tuple[IdentifierReceived, list[Event]] | None:
    while True:
        try:
            data = await stream.receive(READ_BYTES)
        except (anyio.EndOfStream, *_STREAM_ERRORS):
            return None
        try:
            connection.receive_data(data)
        except RemoteProtocolError:
            return None
        events = connection.events_received()
        if events and isinstance(events[0], IdentifierReceived):
            return events[0], events[1:]


class WaitingRoom:
    """The connections of one listener still waiting for their identifier, counted by
    the address they come from (``UNIDENTIFIED_PER_SOURCE``, ``UNIDENTIFIED_AT_ONCE``)."""

    def __init__(self) -> None:
        self._by_source: dict[str, int] = {}
        self._total = 0

    def enter(self, source: str) -> bool:
        """Take a place for a connection from ``source``; False when none is left."""
        if (self._total >= UNIDENTIFIED_AT_ONCE
                or self._by_source.get(source, 0) >= UNIDENTIFIED_PER_SOURCE):
            return False
        self._total += 1
        self._by_source[source] = self._by_source.get(source, 0) + 1
        return True

    def leave(self, source: str) -> None:
        self._total -= 1
        left = self._by_source.pop(source) - 1
        if left:
            self._by_source[source] = left


def _source(stream: ByteStream) -> str:
    try:
        address = stream.extra(SocketAttribute.remote_address, "")
    except OSError:  # gone already
        address = ""
    return str(address[0] if isinstance(address, tuple) else address)


async def serve_audiosocket(stream: ByteStream,
                            redeem: Callable[[str], Awaitable[CallT | None]],
                            answer: Callable[[CallTransport, CallT], Awaitable[None]],
                            waiting: WaitingRoom | None = None) -> None:
    """Admit one connection by its identifier and run its call; close it without a
    word otherwise, or at once when ``waiting`` has no place left for it. The stream
    is closed when this returns."""
    async with stream:
        connection = AudioSocketConnection()
        introduced = None
        source = _source(stream) if waiting is not None else ""
        if waiting is not None and not waiting.enter(source):
            return  # too many waiting already: closed without a word
        try:
            with anyio.move_on_after(IDENTIFY_SECONDS):
                introduced = await _await_identifier(stream, connection)
        finally:
            if waiting is not None:
                waiting.leave(source)
        if introduced is None:
            return  # closed without a word
        identifier, pending = introduced
        call = await redeem(str(identifier.call_id))
        if call is None:
            return  # an unknown, late or used identifier: closed without a word
        transport = AudioSocketTransport(stream, connection, pending)
        transport.keep_busy_until_played()
        try:
            await answer(transport, call)
        finally:
            transport._played()
