"""What ``/v1`` passthrough costs: the same workload direct, through svc, and through peers.

Every target is a process of its own on loopback, and every one relays to the same
OpenAI-compatible upstream. By default the apparatus is lean: the upstream is
``benchmarks/lean_upstream.py`` and the load ``benchmarks/load_client.py``, both on
uvloop, so that on two shared cores the server measured has nearly a core of its own
(in the field, neither the upstream nor the clients run on svc's host).
``--apparatus aiohttp`` measures as before: the test fake (``tests/fakes/upstream.py``,
aiohttp.web on uvloop) and aiohttp's client on asyncio, which between them spent more
CPU on a request than svc did. The targets:

- ``direct``: the upstream itself — the floor every ratio is taken against;
- ``svc``: a real ``svc serve`` with every governance step on — the key looked up by
  fingerprint, the per-key limit counted in PostgreSQL (set high enough never to
  refuse), usage recorded per request — relaying through ``/v1`` passthrough;
- ``relay-aiohttp`` / ``relay-httpx``: a bare BlackSheep route relaying with aiohttp's
  client or httpx (``benchmarks/minimal_relay.py``), no governance at all;
- ``litellm``: LiteLLM's proxy (``litellm[proxy]``, installed apart from the project by
  ``tools/bench-setup-litellm``; left out with a note when it is not installed).

The workload: one chat completion, non-streamed and streamed (``--chunks`` content
chunks, usage asked), one at a time and at ``--concurrency`` requests at once (16 and
64 by default), each cell for ``--seconds``. Printed per cell: requests/s, latency
p50/p99, time to the first chunk (streams), and the ratios to direct — throughput,
added p50/p99 latency, added time to first chunk. Then the goals (at least 30x
LiteLLM's throughput and 0.8x the aiohttp relay's, at most 1.0 ms added p50) with the
figures that decide them. Beside each cell, the target process's own CPU time per
request (from ``/proc``; svc's PostgreSQL work is in processes of its own and not
counted): on a machine shared with other work, wall-clock figures swing from run to
run, while CPU per request hardly moves, so its ratio is the steadier comparison.

Run from the repository root: ``.venv/bin/python -m benchmarks.v1_passthrough``
(``--seconds``, ``--rounds``, ``--only``; ``--help`` for all). The machine is shared:
keep ``--seconds`` short.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import anyio
import httpx
import uvloop

from benchmarks.load_client import LoadConnection, Refused, request_bytes
from benchmarks.upstream_clients import start_upstream
from core.records import frozen
from tests.support.listener import free_port
from tests.support.processes import stop_process

ROOT = Path(__file__).resolve().parent.parent
LITELLM = ROOT / ".venv-litellm" / "bin" / "litellm"
MODEL = "fake-small"
MESSAGES = [{"role": "user", "content": "Tell me about foxes."}]
TARGETS = ("direct", "svc", "relay-aiohttp", "relay-httpx", "litellm")


@frozen
class Target:
    name: str
    base: str  #: ends in /v1
    key: str
    pid: int | None = None  #: the serving process, whose CPU time is read


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _wait_for(log: Path, process: subprocess.Popen, ready: str | int, seconds: float = 240
              ) -> str:
    """Wait until the output matches ``ready`` (a pattern) or the port ``ready`` accepts
    connections; return the output so far."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if re.search(ready, text) if isinstance(ready, str) else _accepts(ready):
            return text
        if process.poll() is not None:
            raise SystemExit(f"{process.args[:3]} exited early:\n{text[-3000:]}")
        time.sleep(0.1)
    raise SystemExit(f"{process.args[:3]} did not start in time")


@contextmanager
def _process(command: list[str], log: Path, ready: str | int,
             env: dict[str, str] | None = None) -> Iterator[tuple[str, int]]:
    """Start ``command`` with its output in ``log``; yield that output once it is
    ``ready`` (see ``_wait_for``) and the process id; stop the process at the end."""
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                   env=env or os.environ.copy())
    try:
        yield _wait_for(log, process, ready), process.pid
    finally:
        stop_process(process)


def _svc(stack: ExitStack, upstream: str, workdir: Path, workers: int = 1) -> Target:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC__")}
    env.update(SVC__STORAGE__DATA_DIR=str(workdir / "svc"), SVC__SERVER__PORT=str(port),
               SVC__MESSAGE_ENCRYPTION_KEY=secrets.token_hex(32))
    if os.environ.get("SVC__DATABASE__URL"):
        env["SVC__DATABASE__URL"] = os.environ["SVC__DATABASE__URL"]
    printed, pid = stack.enter_context(_process(
        [sys.executable, "-m", "app.cli", "serve", "--workers", str(workers)],
        workdir / "svc.log", "svc is serving", env))
    password = re.search(r"one-time password (\S+)", printed)
    if password is None:
        raise SystemExit("svc did not create a first superadmin: use an empty database")
    base = f"http://127.0.0.1:{port}"
    token = httpx.post(f"{base}/api/auth/login", json={
        "email": "admin@localhost", "password": password.group(1)}).json()["token"]
    root = {"Authorization": f"Bearer {token}"}
    for method, path, body in (
            # The one-time password is changed before anything else is allowed.
            ("POST", "/api/me/password", {"current_password": password.group(1),
                                          "new_password": secrets.token_urlsafe(15)}),
            ("POST", "/api/admin/providers", {"name": "bench", "base_url": upstream,
                                              "api_key": "sk-bench", "models": [MODEL]}),
            ("PUT", "/api/admin/settings/api.rate_per_min", {"value": 1_000_000})):
        answer = httpx.request(method, f"{base}{path}", headers=root, json=body)
        answer.raise_for_status()
    minted = httpx.post(f"{base}/api/profile/api-keys", headers=root, json={"name": "bench"})
    minted.raise_for_status()
    return Target("svc", f"{base}/v1", minted.json()["key"], pid)


def _relay(stack: ExitStack, upstream: str, workdir: Path, client: str,
           processes: int = 1) -> Target:
    printed, pid = stack.enter_context(_process(
        [sys.executable, "-m", "benchmarks.minimal_relay", "--upstream", upstream,
         "--client", client, "--processes", str(processes)],
        workdir / f"relay-{client}.log", r"listening on \d+"))
    port = int(re.search(r"listening on (\d+)", printed).group(1))
    return Target(f"relay-{client}", f"http://127.0.0.1:{port}/v1", "sk-bench", pid)


def _litellm(stack: ExitStack, upstream: str, workdir: Path) -> Target | None:
    if not LITELLM.exists():
        print(f"litellm: not installed ({LITELLM}); run tools/bench-setup-litellm",
              file=sys.stderr)
        return None
    config = workdir / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        f"  - model_name: {MODEL}\n"
        "    litellm_params:\n"
        f"      model: openai/{MODEL}\n"
        f"      api_base: {upstream}\n"
        "      api_key: sk-bench\n"
        "general_settings:\n"
        "  master_key: sk-bench\n"
        "litellm_settings:\n"
        "  telemetry: false\n")
    port = free_port()
    env = {**os.environ, "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    _, pid = stack.enter_context(_process(
        [str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
         "--num_workers", "1"], workdir / "litellm.log", port, env))
    return Target("litellm", f"http://127.0.0.1:{port}/v1", "sk-bench", pid)


# -- the load -----------------------------------------------------------------------------


@dataclass
class Cell:
    rps: float
    p50: float  #: ms
    p99: float
    ttfc: float | None  #: ms to the first body bytes, p50 (streams)
    cpu_us: float | None = None  #: the target process's CPU time per request, µs


def _cpu_seconds(pid: int | None) -> float | None:
    """User and system CPU time of ``pid`` and its running children (``svc serve``'s
    workers) so far (None: not known)."""
    if pid is None:
        return None
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children = [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
                for child in (task / "children").read_text().split()]
    return own + sum(_cpu_seconds(child) or 0.0 for child in children)


async def _one(session: aiohttp.ClientSession, target: Target, stream: bool
               ) -> tuple[float, float | None]:
    started = time.perf_counter()
    first = None
    async with session.post(f"{target.base}/chat/completions", json=_body(stream), headers={
            "Authorization": f"Bearer {target.key}"}) as response:
        if response.status != 200:
            raise SystemExit(f"{target.name}: HTTP {response.status}: {await response.text()}")
        if not stream:
            await response.read()
        else:
            async for _ in response.content.iter_any():
                if first is None:
                    first = time.perf_counter() - started
    return time.perf_counter() - started, first


def _body(stream: bool) -> dict:
    body = {"model": MODEL, "messages": MESSAGES}
    if stream:
        body.update(stream=True, stream_options={"include_usage": True})
    return body


@asynccontextmanager
async def _senders(target: Target, stream: bool, workers: int, lean: bool
                   ) -> AsyncIterator[list[Callable[[], Awaitable[tuple[float, float | None]]]]]:
    """One way of sending the request per worker: a connection of its own from the lean
    load client, or aiohttp's client session shared by all."""
    if not lean:
        connector = aiohttp.TCPConnector(limit=0, force_close=False)
        async with aiohttp.ClientSession(connector=connector) as session:
            yield [functools.partial(_one, session, target, stream)] * workers
        return
    url = urlsplit(target.base)
    request = request_bytes(f"{target.base}/chat/completions", target.key, _body(stream))
    connections = [LoadConnection(url.hostname, url.port, request) for _ in range(workers)]
    try:
        yield [connection.exchange for connection in connections]
    except Refused as refused:
        raise SystemExit(f"{target.name}: {refused}") from None
    finally:
        for connection in connections:
            connection.close()


async def measure(target: Target, stream: bool, workers: int, seconds: float,
                  lean: bool = True) -> Cell:
    latencies: list[float] = []
    firsts: list[float] = []
    async with _senders(target, stream, workers, lean) as senders:
        async def worker(send) -> None:
            while time.perf_counter() < deadline:
                took, first = await send()
                latencies.append(took)
                if stream and first is not None:
                    firsts.append(first)

        await asyncio.gather(*[send() for send in senders])  # warm
        cpu_before = _cpu_seconds(target.pid)
        started = time.perf_counter()
        deadline = started + seconds
        async with anyio.create_task_group() as tasks:
            for send in senders:
                tasks.start_soon(worker, send)
        elapsed = time.perf_counter() - started
    cpu_after = _cpu_seconds(target.pid)
    cpu_us = (None if cpu_before is None or cpu_after is None
              else (cpu_after - cpu_before) / max(1, len(latencies)) * 1e6)
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    ttfc = statistics.median(firsts) * 1000 if firsts else None
    return Cell(len(latencies) / elapsed, cuts[49] * 1000, cuts[98] * 1000, ttfc, cpu_us)


async def settle(pids: list[int], seconds: float = 15.0) -> None:
    """Wait (``seconds`` at most) until ``pids`` together use under a tenth of a core.

    A target may go on working after its cell has ended: LiteLLM's logging and spend
    callbacks run after each answer is sent, and after a burst of 64 it stays busy for
    seconds. Measured then, the next target shares its core with that work, and its
    figures are the poorer for coming after LiteLLM in the order."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        before = sum(_cpu_seconds(pid) or 0.0 for pid in pids)
        await asyncio.sleep(0.25)
        if sum(_cpu_seconds(pid) or 0.0 for pid in pids) - before < 0.025:
            return


def round_order(targets: list[Target], round_index: int) -> list[Target]:
    """The targets in the order of one round: the rows of a balanced Latin square
    (Williams's design), so that each round starts with another target and, over as
    many rounds as targets, each target comes right after each other one once.
    Whatever a cell leaves behind (the upstream answered directly at 45,000 requests
    a second, LiteLLM's background work) then falls on every target in turn, not
    always on the one after it."""
    count = len(targets)
    base = [0]  # 0, 1, n-1, 2, n-2, ...
    low, high = 1, count - 1
    while len(base) < count:
        base.append(low)
        low += 1
        if len(base) < count:
            base.append(high)
            high -= 1
    return [targets[(index + round_index) % count] for index in base]


async def run_all(targets: list[Target], seconds: float, rounds: int,
                  concurrency: list[int], lean: bool = True,
                  others: tuple[int, ...] = ()) -> dict[tuple[str, int, str], Cell]:
    """Each cell ``rounds`` times, targets interleaved so load from other processes
    spreads over all of them, in an order that changes from round to round
    (``round_order``); each figure is the median of its rounds. Each cell
    starts once every target and the ``others`` (the upstream) are quiet."""
    pids = [*others, *(target.pid for target in targets if target.pid is not None)]
    cells: dict[tuple[str, int, str], Cell] = {}
    # Sequential cells first: a burst at 64 leaves work behind in some targets (LiteLLM's
    # background tasks, pools grown wide) that would slow the cells measured after it.
    for workers in [1, *concurrency]:
        for stream in (False, True):
            mode = "stream" if stream else "non-stream"
            results: dict[str, list[Cell]] = {t.name: [] for t in targets}
            for round_index in range(rounds):
                for target in round_order(targets, round_index):
                    await settle(pids)
                    results[target.name].append(
                        await measure(target, stream, workers, seconds, lean))
            for name, measured in results.items():
                ttfcs = [c.ttfc for c in measured if c.ttfc is not None]
                cpus = [c.cpu_us for c in measured if c.cpu_us is not None]
                cells[(mode, workers, name)] = Cell(
                    statistics.median(c.rps for c in measured),
                    statistics.median(c.p50 for c in measured),
                    statistics.median(c.p99 for c in measured),
                    statistics.median(ttfcs) if ttfcs else None,
                    statistics.median(cpus) if cpus else None)
    order = {"non-stream": 0, "stream": 1}
    return dict(sorted(cells.items(), key=lambda item: (order[item[0][0]], item[0][1])))


# -- the report ------------------------------------------------------------------------


def print_table(cells: dict[tuple[str, int, str], Cell]) -> None:
    header = ("mode", "conc", "target", "req/s", "p50 ms", "p99 ms", "ttfc ms", "x direct",
              "+p50 ms", "+p99 ms", "+ttfc ms", "cpu us/req")
    print("{:<10} {:>4} {:<13} {:>8} {:>7} {:>7} {:>7} {:>8} {:>7} {:>7} {:>8} {:>10}".format(
        *header))
    for (mode, workers, name), cell in cells.items():
        direct = cells[(mode, workers, "direct")]
        ttfc = f"{cell.ttfc:.2f}" if cell.ttfc is not None else "-"
        extra = (f"{cell.ttfc - direct.ttfc:+.2f}" if cell.ttfc is not None
                 and direct.ttfc is not None else "-")
        cpu = f"{cell.cpu_us:.0f}" if cell.cpu_us is not None else "-"
        print("{:<10} {:>4} {:<13} {:>8.0f} {:>7.2f} {:>7.2f} {:>7} {:>7.3f}x {:>+7.2f} "
              "{:>+7.2f} {:>8} {:>10}".format(mode, workers, name, cell.rps, cell.p50, cell.p99,
                                              ttfc, cell.rps / direct.rps, cell.p50 - direct.p50,
                                              cell.p99 - direct.p99, extra, cpu))


def print_goals(cells: dict[tuple[str, int, str], Cell], concurrency: list[int]) -> None:
    names = {name for _, _, name in cells}
    if "svc" not in names:
        return
    print("\ngoals (svc passthrough, every governance step on):")
    for mode in ("non-stream", "stream"):
        added = cells[(mode, 1, "svc")].p50 - cells[(mode, 1, "direct")].p50
        verdict = "met" if added <= 1.0 else "NOT met"
        print(f"  {mode:<10} added p50, sequential: {added:.2f} ms (goal <= 1.0): {verdict}")
        for workers in concurrency:
            svc = cells[(mode, workers, "svc")].rps
            for peer, goal in (("litellm", 30.0), ("relay-aiohttp", 0.8)):
                if peer not in names:
                    print(f"  {mode:<10} c={workers:<3} vs {peer}: not measured")
                    continue
                ratio = svc / cells[(mode, workers, peer)].rps
                verdict = "met" if ratio >= goal else "NOT met"
                print(f"  {mode:<10} c={workers:<3} throughput vs {peer:<13} {ratio:7.2f}x "
                      f"(goal >= {goal:g}x): {verdict}")
            relay_cpu = cells.get((mode, workers, "relay-aiohttp"))
            svc_cpu = cells[(mode, workers, "svc")].cpu_us
            if relay_cpu is not None and relay_cpu.cpu_us and svc_cpu:
                print(f"  {mode:<10} c={workers:<3} CPU per request, relay-aiohttp / svc: "
                      f"{relay_cpu.cpu_us / svc_cpu:5.2f}x (the throughput a core allows)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="measuring time per cell")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per cell; medians shown")
    parser.add_argument("--chunks", type=int, default=20, help="content chunks per stream")
    parser.add_argument("--concurrency", type=int, nargs="*", default=[16, 64])
    parser.add_argument("--only", nargs="*", default=list(TARGETS), choices=TARGETS)
    parser.add_argument("--workers", type=int, default=1,
                        help="svc's worker processes, and the bare relays' processes "
                             "(default 1, one process)")
    parser.add_argument("--apparatus", choices=("lean", "aiohttp"), default="lean",
                        help="the upstream and the load: lean (benchmarks/lean_upstream.py "
                             "and benchmarks/load_client.py on uvloop, the default), or "
                             "aiohttp (the test fake and aiohttp's client on asyncio)")
    args = parser.parse_args()
    lean = args.apparatus == "lean"
    with tempfile.TemporaryDirectory(prefix="v1bench-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        upstream_process, upstream = start_upstream(args.chunks, lean)
        stack.callback(upstream_process.wait, 10)
        stack.callback(upstream_process.terminate)
        targets = [Target("direct", upstream, "sk-bench")]
        if "svc" in args.only:
            targets.append(_svc(stack, upstream, workdir, args.workers))
        for client in ("aiohttp", "httpx"):
            if f"relay-{client}" in args.only:
                targets.append(_relay(stack, upstream, workdir, client, args.workers))
        if "litellm" in args.only and (litellm := _litellm(stack, upstream, workdir)):
            targets.append(litellm)
        with asyncio.Runner(loop_factory=uvloop.new_event_loop if lean else None) as runner:
            cells = runner.run(run_all(targets, args.seconds, args.rounds, args.concurrency,
                                       lean, (upstream_process.pid,)))
    apparatus = ("lean upstream and load client on uvloop" if lean else
                 "aiohttp.web upstream, aiohttp client on asyncio")
    print(f"loopback, {os.cpu_count()} cores; every target a process of its own; "
          f"{apparatus}; {args.chunks} chunks per stream; median of {args.rounds} "
          f"round(s) of {args.seconds:g} s per cell")
    print_table(cells)
    print_goals(cells, args.concurrency)


if __name__ == "__main__":
    main()
