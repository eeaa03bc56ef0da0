"""Which HTTP client should call upstream model servers? Measured on loopback.

Runs the fake OpenAI-compatible upstream (``tests/fakes/upstream.py``) in its own
process and drives it with each candidate, non-streamed and streamed, one request at a
time and 16 at once, printing requests/s, p50 and p99 latency, and each candidate's
throughput as a ratio of ``ProviderClient``'s:

- ``ProviderClient``: our adapter (``adapters.providers.http1`` underneath, a pooled
  HTTP/1.1 client over httptools; streams go through ``relay``, which also notes usage
  and finish for accounting);
- ``aiohttp``: aiohttp's client bare, which the adapter used before;
- ``httpx``: httpx.AsyncClient (with sniffio installed, as DESIGN.md requires);
- ``h11``: a minimal keep-alive h11 client on anyio streams, a floor for pure Python.

Run from the repository root: ``.venv/bin/python -m benchmarks.upstream_clients``
(``--seconds``, ``--rounds``, ``--chunks``, ``--uvloop``; ``--help`` for all).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path

import aiohttp
import anyio
import h11
import httpx

from adapters.providers import ProviderClient, Upstream

ROOT = Path(__file__).resolve().parent.parent
BODY = {"model": "fake-small", "messages": [{"role": "user", "content": "Tell me about foxes."}]}
STREAM_BODY = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
Call = Callable[[bool], Awaitable[int]]  # (stream) -> bytes received
KEYS = ("rps", "p50", "p99", "cpu_us")


# -- the candidates: each opens its pool, and returns a call per worker ---------------


async def provider_client(stack: AsyncExitStack, base: str) -> Callable[[], Call]:
    client = await stack.enter_async_context(ProviderClient())
    upstream = Upstream(base, api_key="sk-bench")

    async def call(stream: bool) -> int:
        if not stream:
            return len(json.dumps(await client.complete(upstream, BODY)))
        size = 0
        async with client.relay(upstream, STREAM_BODY) as relay:
            async for data in relay:
                size += len(data)
        return size

    return lambda: call


async def bare_aiohttp(stack: AsyncExitStack, base: str) -> Callable[[], Call]:
    session = await stack.enter_async_context(aiohttp.ClientSession())
    headers = {"Authorization": "Bearer sk-bench"}

    async def call(stream: bool) -> int:
        body = STREAM_BODY if stream else BODY
        async with session.post(f"{base}/chat/completions", json=body, headers=headers) as response:
            if not stream:
                return len(json.dumps(await response.json()))
            return sum([len(data) async for data in response.content.iter_any()])

    return lambda: call


async def httpx_client(stack: AsyncExitStack, base: str) -> Callable[[], Call]:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    client = await stack.enter_async_context(httpx.AsyncClient(limits=limits, timeout=30))
    headers = {"Authorization": "Bearer sk-bench"}

    async def call(stream: bool) -> int:
        if not stream:
            response = await client.post(f"{base}/chat/completions", json=BODY, headers=headers)
            return len(json.dumps(response.json()))
        request = client.build_request("POST", f"{base}/chat/completions", json=STREAM_BODY, headers=headers)
        response = await client.send(request, stream=True)
        try:
            return sum([len(data) async for data in response.aiter_raw()])
        finally:
            await response.aclose()

    return lambda: call


class H11Connection:
    """One keep-alive HTTP/1.1 connection driven by h11 over an anyio stream."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.stream: anyio.abc.ByteStream | None = None
        self.conn = h11.Connection(our_role=h11.CLIENT)

    async def post(self, target: str, body: bytes) -> bytes:
        if self.stream is None:
            self.stream = await anyio.connect_tcp(self.host, self.port)
        if self.conn.our_state is h11.DONE:
            self.conn.start_next_cycle()
        headers = [
            ("Host", f"{self.host}:{self.port}"),
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            ("Authorization", "Bearer sk-bench"),
        ]
        request = h11.Request(method="POST", target=target, headers=headers)
        for event in (request, h11.Data(data=body), h11.EndOfMessage()):
            await self.stream.send(self.conn.send(event))
        return await self._read_response()

    async def _read_response(self) -> bytes:
        parts = []
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                self.conn.receive_data(await self.stream.receive(65536))
            elif isinstance(event, h11.Data):
                parts.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                return b"".join(parts)


async def h11_client(stack: AsyncExitStack, base: str) -> Callable[[], Call]:
    url = httpx.URL(base)
    target = f"{url.path}/chat/completions"

    def per_worker() -> Call:
        connection = H11Connection(url.host, url.port)
        stack.push_async_callback(lambda: connection.stream.aclose() if connection.stream else anyio.sleep(0))

        async def call(stream: bool) -> int:
            body = json.dumps(STREAM_BODY if stream else BODY).encode()
            data = await connection.post(target, body)
            return len(data) if stream else len(json.dumps(json.loads(data)))

        return call

    return per_worker


CANDIDATES = {
    "ProviderClient": provider_client,
    "aiohttp": bare_aiohttp,
    "httpx": httpx_client,
    "h11": h11_client,
}


# -- measuring -----------------------------------------------------------------------


async def measure(make_call: Callable[[], Call], stream: bool, workers: int, seconds: float) -> dict:
    """Run ``workers`` loops for ``seconds``; return req/s, latency percentiles and
    this process's CPU per call (the client's own cost: the upstream runs apart)."""
    latencies: list[float] = []
    calls = [make_call() for _ in range(workers)]
    for call in calls:  # warm up: open every connection before the clock starts
        await call(stream)
    deadline = time.perf_counter() + seconds

    async def worker(call: Call) -> None:
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            await call(stream)
            latencies.append(time.perf_counter() - start)

    started, cpu = time.perf_counter(), time.process_time()
    async with anyio.create_task_group() as tasks:
        for call in calls:
            tasks.start_soon(worker, call)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    quantiles = statistics.quantiles(latencies, n=100)
    return {"rps": len(latencies) / elapsed, "p50": quantiles[49] * 1000,
            "p99": quantiles[98] * 1000, "cpu_us": cpu / len(latencies) * 1e6}


async def run_all(
    base: str, seconds: float, rounds: int, names: list[str]
) -> list[tuple[str, str, int, dict]]:
    """Every cell ``rounds`` times, candidates interleaved so that load from other
    processes spreads over all of them; each figure is the median of its rounds."""
    rows = []
    for stream in (False, True):
        for workers in (1, 16):
            results: dict[str, list[dict]] = {name: [] for name in names}
            for _ in range(rounds):
                for name in names:
                    async with AsyncExitStack() as stack:
                        make_call = await CANDIDATES[name](stack, base)
                        results[name].append(await measure(make_call, stream, workers, seconds))
            for name in names:
                median = {key: statistics.median(r[key] for r in results[name]) for key in KEYS}
                rows.append(("stream" if stream else "non-stream", name, workers, median))
    return rows


def print_table(rows: list[tuple[str, str, int, dict]]) -> None:
    """One line per cell; the last column is req/s over ProviderClient's (or the first
    candidate's, when ``--only`` left ProviderClient out)."""
    base_name = "ProviderClient" if any(row[1] == "ProviderClient" for row in rows) else rows[0][1]
    reference = {(mode, workers): r["rps"] for mode, name, workers, r in rows if name == base_name}
    header = ("mode", "conc", "client", "req/s", "p50 ms", "p99 ms", "cpu us", f"vs {base_name}")
    print("{:<11} {:>4} {:<15} {:>9} {:>8} {:>8} {:>7} {:>18}".format(*header))
    for mode, name, workers, r in rows:
        ratio = r["rps"] / reference[(mode, workers)]
        cells = (mode, workers, name, r["rps"], r["p50"], r["p99"], r["cpu_us"], ratio)
        print("{:<11} {:>4} {:<15} {:>9.0f} {:>8.2f} {:>8.2f} {:>7.0f} {:>17.2f}x".format(*cells))


def start_upstream(chunks: int, lean: bool = False) -> tuple[subprocess.Popen, str]:
    """The loopback fake upstream as a process (aiohttp.web on uvloop), or with ``lean``
    the one that answers the same bytes at a fraction of its CPU
    (``benchmarks/lean_upstream.py``); with the base URL it serves."""
    command = ([sys.executable, "-m", "benchmarks.lean_upstream", "--port", "0"] if lean else
               [sys.executable, "-m", "tests.fakes.upstream", "--port", "0", "--uvloop"])
    command += ["--chunks", str(chunks)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline() if process.stdout else ""
    if not line.startswith("listening on "):
        process.kill()
        raise SystemExit(f"the fake upstream did not start: {line!r}")
    return process, f"http://127.0.0.1:{int(line.split()[-1])}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="measuring time per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per cell; medians are shown")
    parser.add_argument("--chunks", type=int, default=20, help="content chunks per streamed answer")
    parser.add_argument("--uvloop", action="store_true", help="run the clients on uvloop")
    parser.add_argument("--only", nargs="*", default=list(CANDIDATES), choices=list(CANDIDATES))
    args = parser.parse_args()
    process, base = start_upstream(args.chunks)
    try:
        loop_factory = None
        if args.uvloop:
            import uvloop

            loop_factory = uvloop.new_event_loop
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            rows = runner.run(run_all(base, args.seconds, args.rounds, args.only))
    finally:
        process.terminate()
        process.wait(timeout=10)
    loop = "uvloop" if args.uvloop else "asyncio"
    print(
        f"loopback; fake upstream in its own process (uvloop); clients on {loop};"
        f" {args.chunks} chunks per stream; median of {args.rounds} rounds of {args.seconds:g} s"
    )
    print_table(rows)


if __name__ == "__main__":
    main()
