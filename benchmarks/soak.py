"""Soak: steady ``/v1`` traffic against one ``svc serve`` for a long while, its memory
sampled, to show that nothing grows without end.

One ``svc serve`` (its own embedded PostgreSQL) relays to the fake upstream
(``tests/fakes/upstream.py``). ``--clients`` clients send completions without pause —
streamed and whole, a few with a bad model or a missing key so refusals are exercised
too — for ``--seconds`` (10 minutes by default). The server's resident memory (RSS) is
sampled every ``--every`` seconds.

Printed: the samples, then requests/s and the status mix, and the verdict on memory:
the growth over the second half of the run (MB and MB per minute, least squares) and
the ratio of the last sample to the one at mid-run. Flat memory is a slope near zero
and a ratio near 1.00; warm-up (caches, pools, the allocator's arenas) belongs to the
first half and is left out.

Run from the repository root: ``.venv/bin/python -m benchmarks.soak`` (``--seconds``,
``--clients``, ``--every``). The machine is shared: keep ``--clients`` low.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import shutil
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import aiohttp
import psutil

from benchmarks import servers
from benchmarks.servers import CHAT
from benchmarks.upstream_clients import start_upstream
from tests.support.processes import stop_process

# One request in ten is refused on purpose: an unknown model, or no key at all.
MIX = (("whole", CHAT, True),) * 5 + (("streamed", {**CHAT, "stream": True}, True),) * 4 + (
    ("unknown model", {**CHAT, "model": "nothing-here"}, True),
    ("no key", CHAT, False))


async def traffic(base: str, key: str, clients: int, until: float,
                  statuses: collections.Counter) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as session:
        async def client(number: int) -> None:
            turn = number
            while time.monotonic() < until:
                _, body, keyed = MIX[turn % len(MIX)]
                turn += 1
                headers = {"Authorization": f"Bearer {key}"} if keyed else {}
                try:
                    async with session.post(f"{base}/v1/chat/completions", json=body,
                                            headers=headers) as answer:
                        await answer.read()
                    statuses[answer.status] += 1
                except aiohttp.ClientError as error:
                    statuses[type(error).__name__] += 1

        await asyncio.gather(*(client(n) for n in range(clients)))


async def sample(process: psutil.Process, every: float, until: float,
                 samples: list[tuple[float, float]], started: float) -> None:
    while time.monotonic() < until:
        samples.append((time.monotonic() - started, process.memory_info().rss / 2**20))
        print(f"  {samples[-1][0]:7.0f} s  {samples[-1][1]:8.1f} MB", flush=True)
        await asyncio.sleep(every)
    samples.append((time.monotonic() - started, process.memory_info().rss / 2**20))


async def soak(base: str, key: str, pid: int, seconds: float, clients: int, every: float
               ) -> tuple[list[tuple[float, float]], collections.Counter]:
    started = time.monotonic()
    until = started + seconds
    samples: list[tuple[float, float]] = []
    statuses: collections.Counter = collections.Counter()
    await asyncio.gather(traffic(base, key, clients, until, statuses),
                         sample(psutil.Process(pid), every, until, samples, started))
    return samples, statuses


def verdict(samples: list[tuple[float, float]], statuses: collections.Counter,
            seconds: float) -> None:
    total = sum(statuses.values())
    print(f"\nrequests {total} in {seconds:.0f} s = {total / seconds:.0f}/s; statuses "
          + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items(), key=str)))
    second_half = [(t, mb) for t, mb in samples if t >= seconds / 2]
    if len(second_half) < 2:
        print("too few samples in the second half for a verdict: run longer")
        return
    times, sizes = zip(*second_half)
    slope = statistics.linear_regression(times, sizes).slope * 60
    grown = sizes[-1] - sizes[0]
    print(f"RSS: start {samples[0][1]:.1f} MB, mid-run {sizes[0]:.1f} MB, "
          f"end {sizes[-1]:.1f} MB, peak {max(mb for _, mb in samples):.1f} MB")
    print(f"second half: {grown:+.1f} MB, {slope:+.2f} MB/min (least squares), "
          f"end/mid ratio {sizes[-1] / sizes[0]:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="svc-soak-"))
    upstream_process, upstream = start_upstream(chunks=8)
    try:
        with ExitStack() as stack:
            server, printed = servers.serve(stack, workdir, "svc", None,
                                            servers.new_encryption_key())
            root = servers.sign_in_first_superadmin(server.base, printed)
            servers.provide(server.base, root, upstream, rate_per_min=1_000_000)
            [key] = servers.mint_keys(server.base, root, 1)
            print(f"soaking {server.base} for {args.seconds:.0f} s with {args.clients} "
                  "clients; RSS of the server process:")
            samples, statuses = asyncio.run(soak(server.base, key, server.pid, args.seconds,
                                                 args.clients, args.every))
            verdict(samples, statuses, args.seconds)
    finally:
        stop_process(upstream_process)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
