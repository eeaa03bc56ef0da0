"""The floor of the call-load benchmark: a bare asyncio AudioSocket server.

What any AudioSocket server must do for a call, and nothing more: answer the
dialplan's request with a new identifier (the same request the callers make to svc),
read each connection's identifier frame, split the caller's audio into frames and
drop it, and send every call a 320-byte frame of audio held in memory every 20 ms,
from one ticker for all calls. No ticket, database, speech, recording or call record.
Served on uvloop, as svc is. svc's CPU per call over this one's, with the same
callers, is what the service costs above the least an asyncio server spends.

Run by ``benchmarks/call_load.py --floor``:
``python -m benchmarks.audiosocket_floor --port P --pbx-port Q [--cpu 0]``; prints
``floor is serving`` once both sockets listen.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import struct
import uuid

from aiohttp import web

from benchmarks.call_load_server import TONE

FRAME_S = 0.020
_HEADER = struct.Struct(">BH")
_IDENTIFIER, _AUDIO, _HANGUP = 0x01, 0x10, 0x00
#: One second of svc's benchmark tone as 50 wire frames of 320 bytes (20 ms of 16-bit PCM).
FRAMES = [_HEADER.pack(_AUDIO, 320) + TONE[start:start + 320]
          for start in range(0, len(TONE), 320)]


class Call(asyncio.Protocol):
    """One AudioSocket connection: on the air once its identifier frame is read."""

    def __init__(self, calls: set[Call]) -> None:
        self.calls = calls
        self.buffer = bytearray()
        self.identified = False
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= _HEADER.size:
            kind, length = _HEADER.unpack_from(self.buffer)
            if len(self.buffer) < _HEADER.size + length:
                return
            del self.buffer[:_HEADER.size + length]
            if kind == _IDENTIFIER and not self.identified:
                self.identified = True
                self.calls.add(self)
            elif kind == _HANGUP:
                self.transport.close()
                return

    def connection_lost(self, exc: Exception | None) -> None:
        self.calls.discard(self)


async def tick(calls: set[Call]) -> None:
    """Every call's frame every 20 ms, on an absolute schedule (no drift)."""
    loop = asyncio.get_running_loop()
    start, count = loop.time(), 0
    while True:
        frame = FRAMES[count % len(FRAMES)]
        for call in calls:
            call.transport.write(frame)
        count += 1
        await asyncio.sleep(max(0.0, start + count * FRAME_S - loop.time()))


async def answer(_: web.Request) -> web.Response:
    return web.Response(text=str(uuid.uuid4()))


async def serve(port: int, pbx_port: int) -> None:
    calls: set[Call] = set()
    app = web.Application()
    app.router.add_get("/api/telephony/pbx/answer", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    loop = asyncio.get_running_loop()
    await loop.create_server(lambda: Call(calls), "127.0.0.1", pbx_port, backlog=2048)
    ticker = asyncio.create_task(tick(calls))
    print("floor is serving", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        ticker.cancel()
        await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pbx-port", type=int, required=True)
    parser.add_argument("--cpu", type=int, help="pin the server to this CPU")
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    import uvloop

    uvloop.run(serve(args.port, args.pbx_port))


if __name__ == "__main__":
    main()
