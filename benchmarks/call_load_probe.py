"""The callers of the call-load benchmark: many AudioSocket calls from one process.

Each call is what Asterisk does (``core.audiosocket.AudioSocketClient``): the
dialplan's answer request, the identifier frame, then a 320-byte frame of caller
audio every 20 ms — here silence, so no turn starts and what the line sends is its
opening, paced by the service. Every frame that arrives is timestamped as it is read.
One ticker writes every call's frame on the same 20 ms schedule, and the reading is
done in ``asyncio.Protocol`` callbacks, so the callers cost as little as they can.

From the arrival times of each call's frames: the pacing jitter (how far each
interval between two frames is from 20 ms) and the missed slots (20 ms slots between
the first and last frame of the opening in which no frame came: with an instant
synthesiser the opening fills every slot).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from array import array
from dataclasses import dataclass, field
from typing import Callable

import aiohttp

from core.audiosocket import AudioReceived, AudioSocketClient, HangupReceived, Kind
from core.audiosocket._wire import encode_frame
from core.errors import RemoteProtocolError

__all__ = ["CallProbe", "LoadResult", "run_load"]

FRAME_S = 0.020
SILENT_WIRE_FRAME = encode_frame(Kind.AUDIO, bytes(320))
#: Intervals longer than this are between utterances, not inside one.
UTTERANCE_GAP_S = 0.5


class CallProbe(asyncio.Protocol):
    """One call's socket: writes the identifier, timestamps every audio frame read."""

    def __init__(self, call_id: uuid.UUID) -> None:
        self.client = AudioSocketClient(call_id)
        self.arrivals = array("d")
        self.odd_frames = 0
        self.transport: asyncio.Transport | None = None
        self.ended_by_line = False
        self.fault: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # asyncio and uvloop both set TCP_NODELAY on TCP transports, as Asterisk does.
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.client.data_to_send())  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        try:
            self.client.receive_data(data)
        except RemoteProtocolError as exc:
            self.fault = str(exc)
            self.hang_up()
            return
        for event in self.client.events_received():
            if isinstance(event, AudioReceived):
                self.arrivals.append(now)
                self.odd_frames += len(event.pcm) != 320
            elif isinstance(event, HangupReceived):
                self.ended_by_line = True

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def speak_silence(self) -> None:
        if self.transport is not None and not self.ended_by_line:
            self.transport.write(SILENT_WIRE_FRAME)

    def hang_up(self) -> None:
        if self.transport is not None:
            self.transport.close()


@dataclass
class LoadResult:
    calls: int
    connected: int
    window_s: float
    #: |interval − 20 ms| of every interval inside an utterance, in milliseconds.
    jitter_ms: list[float] = field(default_factory=list)
    frames: int = 0
    missed_slots: int = 0
    odd_frames: int = 0
    ended_early: int = 0
    faults: int = 0


async def _answer(http: aiohttp.ClientSession, base: str, secret: str, caller: str,
                  dialled: str) -> str:
    async with http.get(base + "/api/telephony/pbx/answer",
                        headers={"x-service-telephony-key": secret},
                        params={"from": caller, "to": dialled}) as answer:
        return (await answer.text()).strip() if answer.status == 200 else ""


async def run_load(*, http_url: str, audiosocket: tuple[str, int], secret: str,
                   lines: list[str], calls: int, ramp_s: float, window_s: float,
                   on_window: Callable[[], None] = lambda: None) -> LoadResult:
    """Ring ``calls`` calls spread over ``lines``, started evenly over ``ramp_s``; once
    all are connected, measure ``window_s`` seconds; then hang every call up.
    ``on_window`` is called as the measured window opens and as it closes."""
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

    async def ring(index: int, http: aiohttp.ClientSession) -> None:
        await asyncio.sleep(ramp_s * index / max(calls, 1))
        caller = f"+4479{index:09d}"
        try:
            identifier = await _answer(http, http_url, secret, caller,
                                       lines[index % len(lines)])
        except (aiohttp.ClientError, asyncio.TimeoutError):
            return  # not answered in time: the call counts as not connected
        if not identifier:
            return
        probe = CallProbe(uuid.UUID(identifier))
        await loop.create_connection(lambda: probe, *audiosocket)
        probes.append(probe)

    ticker = asyncio.create_task(tick())
    connector = aiohttp.TCPConnector(limit=64)
    async with aiohttp.ClientSession(connector=connector,
                                     timeout=aiohttp.ClientTimeout(total=20)) as http:
        await asyncio.gather(*(ring(index, http) for index in range(calls)))
    on_window()
    window_start = time.perf_counter()
    await asyncio.sleep(window_s)
    window_end = time.perf_counter()
    on_window()
    stop_ticking.set()
    await ticker
    for probe in probes:
        probe.hang_up()
    result = LoadResult(calls=calls, connected=len(probes), window_s=window_s)
    for probe in probes:
        _measure(probe, window_start, window_end, result)
    return result


def _measure(probe: CallProbe, start: float, end: float, result: LoadResult) -> None:
    arrivals = [t for t in probe.arrivals if start <= t <= end]
    result.frames += len(arrivals)
    result.odd_frames += probe.odd_frames
    result.faults += probe.fault is not None
    result.ended_early += probe.ended_by_line
    first = 0
    for index in range(1, len(arrivals) + 1):
        if index < len(arrivals):
            interval = arrivals[index] - arrivals[index - 1]
            if interval <= UTTERANCE_GAP_S:
                result.jitter_ms.append(abs(interval - FRAME_S) * 1000)
                continue
        # One utterance ends: every 20 ms slot from its first frame to its last should
        # hold a frame (frames read together still count for their own slots).
        span = arrivals[index - 1] - arrivals[first]
        result.missed_slots += max(0, round(span / FRAME_S) + 1 - (index - first))
        first = index
