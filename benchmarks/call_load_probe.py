"""The callers of the call-load benchmark: many AudioSocket calls from one process.

Each call is what Asterisk does (``core.audiosocket.AudioSocketClient``): the
dialplan's answer request, the identifier frame, then a 320-byte frame of caller
audio every 20 ms — here silence, so no turn starts and what the line sends is its
opening, paced by the service. One ticker writes every call's frame on the same 20 ms
schedule, and the sockets are read in reader callbacks, so the callers cost as little
as they can.

Every frame is timed twice: by the kernel as it arrived (``SO_TIMESTAMPNS``, the
receive stamp ``recvmsg`` returns) and by this process as it read it. The callers
share a core and read 500 calls' frames in bursts, between writing their own: their
read times add their own scheduling to the line's pacing, while the kernel's stamps
(taken as the segment is received, on loopback as the server's send lands) do not.
Both are reported; the kernel's is the line's pacing.

From the arrival times of each call's frames: the pacing jitter (how far each
interval between two frames is from 20 ms) and the missed slots (20 ms slots between
the first and last frame of the opening in which no frame came: with an instant
synthesiser the opening fills every slot).
"""

from __future__ import annotations

__all__ = ["CallProbe", "LoadResult", "run_load"]

import asyncio
import socket
import struct
import time
import uuid
from array import array
from dataclasses import dataclass, field
from typing import Callable

import aiohttp

from core.audiosocket import AudioReceived, AudioSocketClient, HangupReceived, Kind
from core.audiosocket._wire import encode_frame
from core.errors import RemoteProtocolError

FRAME_S = 0.020
SILENT_WIRE_FRAME = encode_frame(Kind.AUDIO, bytes(320))
#: Intervals longer than this are between utterances, not inside one.
UTTERANCE_GAP_S = 0.5


#: Linux: ``SO_TIMESTAMPNS`` asks the kernel to stamp each segment as it is received,
#: and ``recvmsg`` to return the stamp (``SCM_TIMESTAMPNS``, the same number) with the
#: data: a ``struct timespec`` on CLOCK_REALTIME.
SO_TIMESTAMPNS = 35
TIMESPEC = struct.Struct("qq")
READ_BYTES = 4096


class CallProbe:
    """One call's socket: writes the identifier, timestamps every audio frame read.

    Each frame gets two times: when the kernel received it (``arrivals``: what the
    line's pacing is measured on) and when this process read it (``reads``: that plus
    the callers' own scheduling on their shared core). TCP may merge segments that
    wait unread into one, keeping the newest stamp; a read that brings several frames
    thus knows the kernel time of its last frame only, and the others are given their
    read time, late rather than early (counted in ``merged``).
    """

    def __init__(self, call_id: uuid.UUID, sock: socket.socket) -> None:
        self.client = AudioSocketClient(call_id)
        self.sock = sock
        self.arrivals = array("d")
        self.reads = array("d")
        self.merged = 0
        self.odd_frames = 0
        self.open = True
        self.ended_by_line = False
        self.fault: str | None = None
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as Asterisk does
        sock.send(self.client.data_to_send())
        asyncio.get_running_loop().add_reader(sock.fileno(), self.readable)

    def readable(self) -> None:
        while self.open:
            try:
                data, ancillary, _, _ = self.sock.recvmsg(READ_BYTES, ANCILLARY_BYTES)
            except BlockingIOError:
                return
            except OSError as exc:
                self.fault = str(exc)
                self.hang_up()
                return
            if not data:
                self.hang_up()
                return
            self._received(data, ancillary)

    def _received(self, data: bytes, ancillary: list) -> None:
        read_at = time.time()
        stamped = read_at
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = TIMESPEC.unpack(payload[:TIMESPEC.size])
                stamped = seconds + nanoseconds / 1e9
        try:
            self.client.receive_data(data)
        except RemoteProtocolError as exc:
            self.fault = str(exc)
            self.hang_up()
            return
        audio = 0
        for event in self.client.events_received():
            if isinstance(event, AudioReceived):
                audio += 1
                self.odd_frames += len(event.pcm) != 320
            elif isinstance(event, HangupReceived):
                self.ended_by_line = True
        for index in range(audio):
            last = index == audio - 1
            self.arrivals.append(stamped if last else read_at)
            self.reads.append(read_at)
        self.merged += max(0, audio - 1)

    def speak_silence(self) -> None:
        if self.open and not self.ended_by_line:
            try:
                self.sock.send(SILENT_WIRE_FRAME)
            except OSError:
                pass  # the line is not reading: this frame is lost, as on a network

    def hang_up(self) -> None:
        if self.open:
            self.open = False
            asyncio.get_running_loop().remove_reader(self.sock.fileno())
            self.sock.close()


ANCILLARY_BYTES = socket.CMSG_SPACE(TIMESPEC.size)


@dataclass
class LoadResult:
    calls: int
    connected: int
    window_s: float
    #: |interval − 20 ms| of every interval inside an utterance, in milliseconds, by
    #: the kernel's arrival stamps and by the callers' read times.
    jitter_ms: list[float] = field(default_factory=list)
    read_jitter_ms: list[float] = field(default_factory=list)
    #: Frames whose kernel stamp was lost to TCP merging them with the next (read late).
    merged: int = 0
    frames: int = 0
    missed_slots: int = 0
    #: The longest interval between two frames inside an utterance (ms), and the most
    #: frames that arrived within one 20 ms slot (a burst the caller's side must take).
    max_gap_ms: float = 0.0
    max_burst: int = 0
    odd_frames: int = 0
    ended_early: int = 0
    faults: int = 0
    #: Calls rung and answered during the window (``churn_per_s``).
    rung_in_window: int = 0


async def _answer(http: aiohttp.ClientSession, base: str, secret: str, caller: str,
                  dialled: str) -> str:
    async with http.get(base + "/api/telephony/pbx/answer",
                        headers={"x-service-telephony-key": secret},
                        params={"from": caller, "to": dialled}) as answer:
        return (await answer.text()).strip() if answer.status == 200 else ""


async def run_load(*, http_url: str, audiosocket: tuple[str, int], secret: str,
                   lines: list[str], calls: int, ramp_s: float, window_s: float,
                   churn_per_s: float = 0.0, settle_s: float = 0.0,
                   on_window: Callable[[], None] = lambda: None) -> LoadResult:
    """Ring ``calls`` calls spread over ``lines``, started evenly over ``ramp_s``; once
    all are connected, measure ``window_s`` seconds; then hang every call up.
    ``churn_per_s``: during the window, hang up the oldest call and ring a new one this
    many times a second (calls coming and going, as on a busy line; the number of calls
    stays about the same). ``on_window`` is called as the measured window opens and as
    it closes. ``settle_s``: seconds between the last call connecting and the window
    opening (a server that sets a call up slowly is then measured once it plays)."""
    loop = asyncio.get_running_loop()
    probes: list[CallProbe] = []
    stop_ticking = asyncio.Event()

    async def tick() -> None:
        start = loop.time()
        count = 0
        while not stop_ticking.is_set():
            for probe in probes:
                probe.speak_silence()
            count += 1
            await asyncio.sleep(max(0.0, start + count * FRAME_S - loop.time()))

    async def ring(index: int, http: aiohttp.ClientSession, at_once: bool = False) -> None:
        if not at_once:
            await asyncio.sleep(ramp_s * index / max(calls, 1))
        caller = f"+4479{index:09d}"
        try:
            identifier = await _answer(http, http_url, secret, caller,
                                       lines[index % len(lines)])
        except (aiohttp.ClientError, asyncio.TimeoutError):
            return  # not answered in time: the call counts as not connected
        if not identifier:
            return
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        await loop.sock_connect(sock, audiosocket)
        probes.append(CallProbe(uuid.UUID(identifier), sock))

    ticker = asyncio.create_task(tick())
    connector = aiohttp.TCPConnector(limit=64)
    async with aiohttp.ClientSession(connector=connector,
                                     timeout=aiohttp.ClientTimeout(total=20)) as http:
        await asyncio.gather(*(ring(index, http) for index in range(calls)))
    await asyncio.sleep(settle_s)
    async def churn(http: aiohttp.ClientSession) -> None:
        ringing = []
        for index in range(calls, calls + round(churn_per_s * window_s)):
            await asyncio.sleep(1 / churn_per_s)
            oldest = next((probe for probe in probes if probe.open), None)
            if oldest is not None:
                oldest.hang_up()
            ringing.append(asyncio.create_task(ring(index, http, at_once=True)))
        await asyncio.gather(*ringing)

    on_window()
    connected = len(probes)
    window_start = time.time()  # the kernel's stamps are on the same clock
    if churn_per_s > 0:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64),
                                         timeout=aiohttp.ClientTimeout(total=20)) as http:
            await asyncio.gather(churn(http), asyncio.sleep(window_s))
    else:
        await asyncio.sleep(window_s)
    window_end = time.time()
    on_window()
    stop_ticking.set()
    await ticker
    for probe in probes:
        probe.hang_up()
    result = LoadResult(calls=calls, connected=connected, window_s=window_s,
                        rung_in_window=len(probes) - connected)
    for probe in probes:
        _measure(probe, window_start, window_end, result)
    return result


def _measure(probe: CallProbe, start: float, end: float, result: LoadResult) -> None:
    window = [index for index, t in enumerate(probe.arrivals) if start <= t <= end]
    arrivals = [probe.arrivals[index] for index in window]
    result.frames += len(arrivals)
    result.odd_frames += probe.odd_frames
    result.faults += probe.fault is not None
    result.ended_early += probe.ended_by_line
    result.merged += probe.merged
    result.missed_slots += _pacing(arrivals, result.jitter_ms)
    _pacing([probe.reads[index] for index in window], result.read_jitter_ms)
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:]) if b - a <= UTTERANCE_GAP_S]
    result.max_gap_ms = max([result.max_gap_ms, *(gap * 1000 for gap in gaps)])
    result.max_burst = max(result.max_burst, _burst(arrivals))


def _burst(times: list[float]) -> int:
    """The most frames that arrived within one 20 ms slot."""
    most, first = 0, 0
    for index, at in enumerate(times):
        while at - times[first] >= FRAME_S:
            first += 1
        most = max(most, index - first + 1)
    return most


def _pacing(times: list[float], jitter_ms: list[float]) -> int:
    """Adds |interval − 20 ms| of each interval inside an utterance to ``jitter_ms``;
    returns the 20 ms slots inside the utterances that went without a frame."""
    missed = 0
    first = 0
    for index in range(1, len(times) + 1):
        if index < len(times):
            interval = times[index] - times[index - 1]
            if interval <= UTTERANCE_GAP_S:
                jitter_ms.append(abs(interval - FRAME_S) * 1000)
                continue
        # One utterance ends: every 20 ms slot from its first frame to its last should
        # hold a frame (frames read together still count for their own slots).
        span = times[index - 1] - times[first]
        missed += max(0, round(span / FRAME_S) + 1 - (index - first))
        first = index
    return missed
