"""The call-load benchmark's floor and its verdict (``benchmarks/audiosocket_floor.py``,
``benchmarks/call_load.py``): the floor answers the dialplan's question, plays a call
only once its identifier is read, in 320-byte frames, and stops at the caller's hang-up;
a level counts as held only with every call up, no missed slot and p99 within 5 ms."""

from __future__ import annotations

import asyncio
import uuid

import aiohttp
import pytest

from benchmarks import audiosocket_floor
from benchmarks.call_load import _held
from benchmarks.call_load_probe import LoadResult
from core.audiosocket import AudioReceived, AudioSocketClient
from tests.support.listener import free_port

pytestmark = pytest.mark.anyio


async def _frames(reader: asyncio.StreamReader, client: AudioSocketClient,
                  wanted: int) -> list[bytes]:
    frames: list[bytes] = []
    while len(frames) < wanted:
        client.receive_data(await reader.read(4096))
        frames += [event.pcm for event in client.events_received()
                   if isinstance(event, AudioReceived)]
    return frames


async def test_the_floor_plays_a_call_once_identified_and_stops_at_its_hang_up():
    port, pbx_port = free_port(), free_port()
    serving = asyncio.create_task(audiosocket_floor.serve(port, pbx_port))
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(100):
                try:
                    async with http.get(f"http://127.0.0.1:{port}/api/telephony/pbx/answer"
                                        ) as answer:
                        identifier = uuid.UUID((await answer.text()).strip())
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
        reader, writer = await asyncio.open_connection("127.0.0.1", pbx_port)
        await asyncio.sleep(0.1)  # several ticks: nothing is sent before the identifier
        assert reader._buffer == b""  # noqa: SLF001 - nothing arrived unasked
        client = AudioSocketClient(identifier)
        writer.write(client.data_to_send())
        frames = await asyncio.wait_for(_frames(reader, client, 3), 10)
        assert {len(frame) for frame in frames} == {320}
        writer.write_eof()  # the caller hangs up: Asterisk closes its side
        await asyncio.wait_for(reader.read(), 10)  # what was in flight, then the close
        assert reader.at_eof()
    finally:
        serving.cancel()


def _level(calls: int, connected: int, missed: int, jitter_ms: float):
    result = LoadResult(calls=calls, connected=connected, window_s=1.0,
                        jitter_ms=[jitter_ms] * 100, missed_slots=missed)
    return result, 0.5, 0.1, (0.0, 0.0)


def test_a_level_is_held_only_with_every_call_up_no_missed_slot_and_p99_within_5_ms():
    assert _held({100: _level(100, 100, 0, 1.0), 250: _level(250, 250, 0, 4.9),
                  500: _level(500, 500, 0, 6.0)}) == "250 calls"
    assert _held({100: _level(100, 99, 0, 1.0)}) == "none of the levels"
    assert _held({100: _level(100, 100, 1, 1.0)}) == "none of the levels"
