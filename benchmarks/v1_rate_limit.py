"""The per-key limit under many clients and two server processes on one database.

Two ``svc serve`` processes share one PostgreSQL (embedded, started here) and relay to
the fake upstream (``tests/fakes/upstream.py``). ``--keys`` API keys each get
``--per-key`` requests (more than the limit), sent by ``--clients`` concurrent
clients, alternately to either server. The limit (GCRA, ``core/ratelimit.py``) lets a
fresh key send its minute at once and earns one request back every 60/limit s, so
the limit must hold to the request: ``--limit`` answers 200 per key plus at most what
the burst's own duration earned, every other 429, nothing else; and every 200 has
its usage row.

Printed: per key the accepted and refused counts, then totals, requests/s, latency
p50/p99 of accepted and refused answers, the accepted/expected ratio per key (1.000 is
exact), and the usage rows against the accepted answers.

Run from the repository root: ``.venv/bin/python -m benchmarks.v1_rate_limit``
(``--keys 10 --per-key 100 --clients 64 --limit 60``). The machine is shared: keep
runs small.
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
import asyncpg

from adapters.embedded_postgres import EmbeddedPostgres
from benchmarks.servers import (
    CHAT,
    mint_keys,
    new_encryption_key,
    provide,
    serve,
    sign_in_first_superadmin,
)
from benchmarks.upstream_clients import start_upstream
from tests.support.processes import stop_process


async def burst(bases: list[str], keys: list[str], per_key: int, clients: int
                ) -> tuple[dict[str, collections.Counter], dict[int, list[float]], float]:
    """Send ``per_key`` requests for each key; statuses per key, latencies per status."""
    jobs: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
    for round_ in range(per_key):
        for key in keys:
            jobs.put_nowait((round_, key))
    statuses: dict[str, collections.Counter] = {key: collections.Counter() for key in keys}
    latencies: dict[int, list[float]] = collections.defaultdict(list)
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def client(number: int) -> None:
            while not jobs.empty():
                round_, key = jobs.get_nowait()
                base = bases[(number + round_) % len(bases)]
                started = time.perf_counter()
                async with session.post(f"{base}/v1/chat/completions", json=CHAT,
                                        headers={"Authorization": f"Bearer {key}"}) as answer:
                    await answer.read()
                latencies[answer.status].append(time.perf_counter() - started)
                statuses[key][answer.status] += 1

        started = time.perf_counter()
        await asyncio.gather(*(client(n) for n in range(clients)))
    return statuses, latencies, time.perf_counter() - started


async def usage_rows(dsn: str) -> dict[str, int]:
    """Usage rows per key prefix, as the database holds them."""
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(
            "SELECT k.prefix, count(u.*) AS n FROM api_key k LEFT JOIN usage_event u "
            "ON u.api_key_id = k.id AND u.outcome = 'ok' GROUP BY k.prefix")
    finally:
        await connection.close()
    return {row["prefix"]: row["n"] for row in rows}


def _ms(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:.1f}"


def report(statuses, latencies, seconds: float, limit: int, rows: dict[str, int]) -> bool:
    print(f"\n{'key':>14} {'200':>5} {'429':>5} {'other':>6} {'ratio':>7} {'usage':>6}")
    exact = True
    earned = int(seconds * limit / 60)  # requests earned back while the burst ran
    for key, counts in statuses.items():
        other = sum(n for status, n in counts.items() if status not in (200, 429))
        used = rows.get(key[:12], 0)
        ratio = counts[200] / limit
        exact &= (limit <= counts[200] <= limit + earned + 1 and other == 0
                  and used == counts[200])
        print(f"{key[:12] + '…':>14} {counts[200]:>5} {counts[429]:>5} {other:>6} "
              f"{ratio:>7.3f} {used:>6}")
    total = sum(sum(c.values()) for c in statuses.values())
    accepted = sum(c[200] for c in statuses.values())
    print(f"\nrequests {total} in {seconds:.1f} s = {total / seconds:.0f}/s over both servers")
    print(f"accepted {accepted} = {accepted / (limit * len(statuses)):.3f} of "
          f"{limit} per key x {len(statuses)} keys")
    for status in sorted(latencies):
        values = latencies[status]
        print(f"  {status}: {len(values):>6} answers, p50 {_ms(values, 0.5)} ms, "
              f"p99 {_ms(values, 0.99)} ms, mean {statistics.fmean(values) * 1000:.1f} ms")
    print("the limit held to the request" if exact else "THE LIMIT DID NOT HOLD EXACTLY")
    return exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=10)
    parser.add_argument("--per-key", type=int, default=100, help="requests per key (> limit)")
    parser.add_argument("--clients", type=int, default=64, help="concurrent clients")
    parser.add_argument("--limit", type=int, default=60, help="api.rate_per_min")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="svc-rate-limit-"))
    postgres = EmbeddedPostgres(workdir / "pg")
    dsn = postgres.start()
    upstream_process, upstream = start_upstream(chunks=4)
    try:
        with ExitStack() as stack:
            key = new_encryption_key()
            first, printed = serve(stack, workdir, "svc-a", dsn, key)
            second, _ = serve(stack, workdir, "svc-b", dsn, key)
            root = sign_in_first_superadmin(first.base, printed)
            provide(first.base, root, upstream, args.limit)
            keys = mint_keys(first.base, root, args.keys)
            time.sleep(2)  # both processes' settings caches see the limit
            statuses, latencies, seconds = asyncio.run(
                burst([first.base, second.base], keys, args.per_key, args.clients))
            time.sleep(1)  # usage rows are written off the request path
            exact = report(statuses, latencies, seconds, args.limit, asyncio.run(usage_rows(dsn)))
    finally:
        stop_process(upstream_process)
        postgres.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    raise SystemExit(0 if exact else 1)


if __name__ == "__main__":
    main()
