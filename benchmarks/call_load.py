"""Many simultaneous AudioSocket calls against one server process: CPU and pacing.

N calls (e.g. 50, 100, 250, 500) are rung at once over the pbx transport against one
server process (``benchmarks/call_load_server.py``: svc with instant fake speech) pinned
to one CPU; the callers (``benchmarks/call_load_probe.py``) run in this process on the
other CPU. Each call hears its opening — a long one, so it lasts the whole
measurement — while it sends 20 ms of silence every 20 ms, as Asterisk does. For each
N it prints the server's CPU (share of one core, and per call), the frames each call
received per second (50 when the line keeps pace), the jitter of the
frames' pacing as the callers' kernel received them (p50, p99 of |interval − 20 ms|)
and, for comparison, as the callers read them (p99), the 20 ms slots that went
without a frame, frames that were not 20 ms long, frames whose kernel stamp TCP
merged away (timed by their read instead), the CPU the callers themselves used
(a share of their own core) and, with ``--churn C``, the calls rung and answered during
the window (``rung``): C times a second the oldest call hangs up and a new one is rung,
so calls come and go while the others are measured, as on a busy line. Last, the
server's resident memory (MB) as the window opened and as it closed, the longest gap
between two frames of the opening (``gap``, ms) and the most frames that arrived
within one 20 ms slot (``burst``: a catch-up after a busy moment sends two).

``--hog`` runs a CPU-bound process pinned to the server's core for the whole run, as
another program busy on the same machine would: the server then gets about half its
core, in slices the kernel's scheduler decides.

Goal: 500 calls on one core, p99 jitter under 5 ms, no slot without its frame. After
the levels it prints the most calls the server held so (``held``). ``--settle S`` waits
S seconds between the last call connecting and the window opening, for a server that
sets calls up slowly.

``--floor`` measures the same levels, with the same callers on the same CPU, against
``benchmarks/audiosocket_floor.py`` (a bare asyncio AudioSocket server: reads the
identifier, paces 320-byte frames from memory) and prints svc's CPU per call over the
floor's; goal at most 2.5x. ``--peer`` does the same with asterisk-ai-voice-agent
(``benchmarks/voice_agent_peer.py``, installed apart by
``tools/bench-setup-voice-agent``). ``--workers N`` forks N workers as
``svc serve --workers N`` does, not pinned (the server's CPU then sums its workers):
the calls one host holds.

Run from the repository root: ``.venv/bin/python -m benchmarks.call_load``
(``--calls 50,100,250,500 --window 6``). The machine is shared: keep runs short.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import psutil

from adapters.embedded_postgres import EmbeddedPostgres
from benchmarks.call_load_probe import FRAME_S, LoadResult, run_load
from tests.support.listener import free_port

SECRET = "call-load-shared-secret"
#: svc's CPU per call at most this many times the bare floor's (``--floor``).
FLOOR_GOAL = 2.5
CALLS_PER_LINE = 50  # a line takes 60 calls a minute (spec: telephony.md "Limits")
# A notice near the 600-character limit: at the instant synthesiser's 100 ms a character
# the opening lasts about a minute, longer than the ramp and the measurement together.
NOTICE = ("You are through to the call-load line. " * 16)[:590]


ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def process(args: list[str], ready: str):
    """Run ``args`` until the block ends; wait for ``ready`` in its output first."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=ROOT)
    printed = []
    try:
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the server exited:\n" + "".join(printed))
            printed.append(line)
            if ready in line:
                break
        # Keep reading what it prints: a full pipe would stall the server mid-run.
        threading.Thread(target=proc.stdout.read, daemon=True).start()
        yield proc, "".join(printed)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


#: Spins on one core until killed: the busy neighbour of ``--hog``.
HOG = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


@contextmanager
def hogging(cpu: int, wanted: bool):
    """A CPU-bound process pinned to ``cpu`` while the block runs (when ``wanted``)."""
    if not wanted:
        yield
        return
    hog = subprocess.Popen([sys.executable, "-c", HOG, str(cpu)])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def json_caller(base: str):
    """A tiny JSON client for setting svc up over its own API."""

    def call(method: str, path: str, body=None, token: str | None = None):
        request = urllib.request.Request(base + path, method=method,
                                         data=json.dumps(body).encode() if body else None)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request) as response:
            return json.loads(response.read() or b"{}")

    return call


def _setup(base: str, password: str, pbx_port: int) -> tuple:
    call = json_caller(base)
    token = call("POST", "/api/auth/login", {"email": "admin@localhost",
                                              "password": password})["token"]
    # The one-time password is changed before anything else is allowed.
    call("POST", "/api/me/password", {"current_password": password,
                                       "new_password": secrets.token_urlsafe(15)}, token)
    for key, value in (("features.telephony", True), ("features.voice", True),
                       ("features.voice_live", True), ("voice_live.tts_stream", True),
                       ("voice_live.tts_stream_url", "local"),
                       ("telephony.max_concurrent_calls", 100_000)):
        call("PUT", f"/api/admin/settings/{key}", {"value": value}, token)
    call("PUT", "/api/admin/telephony", {"provider": "pbx", "shared_secret": SECRET,
                                         "pbx_listen": f"127.0.0.1:{pbx_port}"}, token)
    agent = call("POST", "/api/agents", {"name": "Load", "model": "local"}, token)
    me = call("GET", "/api/me", None, token)
    return call, token, agent["id"], me["id"]


def _lines(call, token: str, agent_id: str, owner_id: str, calls: int, run: int) -> list[str]:
    numbers = []
    for index in range(-(-calls // CALLS_PER_LINE)):
        number = f"+44163{run:02d}{index:05d}"
        line = call("POST", "/api/admin/telephony/numbers", {
            "e164": number, "agent_id": agent_id, "owner_user_id": owner_id,
            "provider": "pbx", "notice": NOTICE}, token)
        call("PATCH", f"/api/admin/telephony/numbers/{line['id']}", {"enabled": True}, token)
        numbers.append(number)
    return numbers


#: A level's result, the CPU seconds the server and the callers used in its window, and
#: the server's resident memory (MB) as the window opened and closed.
Measured = tuple[LoadResult, float, float, tuple[float, float]]


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def _row(result: LoadResult, cpu_seconds: float, callers_cpu_seconds: float,
         rss_mb: tuple[float, float]) -> str:
    core = cpu_seconds / result.window_s * 100
    callers = callers_cpu_seconds / result.window_s * 100
    per_call = core / max(result.connected, 1)
    rate = result.frames / max(result.connected, 1) / result.window_s
    return (f"{result.calls:>5} {result.connected:>5} {core:>8.1f} {per_call:>8.3f} "
            f"{rate:>6.1f} "
            f"{statistics.median(result.jitter_ms) if result.jitter_ms else float('nan'):>8.2f} "
            f"{_percentile(result.jitter_ms, 0.99):>8.2f} "
            f"{_percentile(result.read_jitter_ms, 0.99):>8.2f} {result.frames:>8} "
            f"{result.missed_slots:>7} {result.odd_frames:>5} {result.ended_early:>6} "
            f"{result.faults:>6} {result.merged:>6} {callers:>7.1f} {result.rung_in_window:>6} "
            f"{rss_mb[0]:>6.0f} {rss_mb[1]:>6.0f} {result.max_gap_ms:>6.0f} "
            f"{result.max_burst:>5}")


async def _measured(server: psutil.Process, **load) -> Measured:
    """The load's result, the CPU seconds the server and the callers used in its
    measured window, and the server's resident memory (MB) as it opened and closed."""
    callers = psutil.Process()
    readings: list[tuple[float, float, float]] = []
    # With workers, the supervisor's children: each worker's CPU and memory (they run
    # through the whole window, so the same processes are read as it opens and closes).
    serving = [server, *server.children(recursive=True)]

    def read() -> None:
        served = [process.cpu_times() for process in serving]
        calling = callers.cpu_times()
        readings.append((sum(times.user + times.system for times in served),
                         calling.user + calling.system,
                         sum(process.memory_info().rss for process in serving) / 2**20))

    result = await run_load(on_window=read, **load)
    (served_0, calling_0, rss_0), (served_1, calling_1, rss_1) = readings
    return result, served_1 - served_0, calling_1 - calling_0, (rss_0, rss_1)


HEADER = (f"{'calls':>5} {'up':>5} {'cpu %':>8} {'%/call':>8} {'fps':>6} {'jit p50':>8} "
          f"{'jit p99':>8} {'read p99':>8} {'frames':>8} {'missed':>7} {'odd':>5} "
          f"{'ended':>6} {'faults':>6} {'merged':>6} {'callers':>7} {'rung':>6} "
          f"{'rss0':>6} {'rss1':>6} {'gap':>6} {'burst':>5}")
#: A level is held when its p99 jitter is at most this (ms) and no slot went without
#: its frame.
HELD_JITTER_MS = 5.0


def _levels(serving: psutil.Process, base: str, pbx_port: int, lines: dict[int, list[str]],
            args: argparse.Namespace) -> dict[int, Measured]:
    """Each level measured against the server ``serving``, its row printed as it ends."""
    print(f"\n{HEADER}", flush=True)
    measured = {}
    for n, numbers in lines.items():
        measured[n] = _run(serving, base, pbx_port, numbers, n, args)
        print(_row(*measured[n]), flush=True)
        time.sleep(3)  # let the hung-up calls end before the next level
    return measured


def _per_call(measured: Measured) -> float:
    """The server's CPU per call playing at full pace (50 frames a second), as a share
    of one core: its CPU over the frames it sent. Per frame, not per connected call, so
    that a server starved of its core (a busy machine) and sending fewer frames is not
    counted as cheaper."""
    result, cpu_seconds = measured[0], measured[1]
    return cpu_seconds / (result.frames * FRAME_S)


def _held(measured: dict[int, Measured]) -> str:
    """The most calls held with p99 jitter within ``HELD_JITTER_MS`` and no missed slot."""
    held = [n for n, (result, *_) in measured.items()
            if result.connected == n and result.missed_slots == 0
            and _percentile(result.jitter_ms, 0.99) <= HELD_JITTER_MS]
    return f"{max(held)} calls" if held else "none of the levels"


PEER_PYTHON = ROOT / ".venv-voice-agent" / "bin" / "python"


def _other(args: argparse.Namespace, name: str, python: str, module: str,
           extra: list[str]) -> dict[int, Measured]:
    """The same levels against another AudioSocket server ``module`` (``name`` in its
    "is serving" line), with the same callers, on the same CPU."""
    http_port, pbx_port = free_port(), free_port()
    command = [python, "-m", module, "--port", str(http_port), "--pbx-port", str(pbx_port),
               "--cpu", str(args.server_cpu), *extra]
    lines = {n: ["+441630000000"] for n in args.levels}
    with process(command, f"{name} is serving") as (proc, _), hogging(args.server_cpu,
                                                                       args.hog):
        return _levels(psutil.Process(proc.pid), f"http://127.0.0.1:{http_port}", pbx_port,
                       lines, args)


def _compare(name: str, svc: dict[int, Measured], other: dict[int, Measured],
             goal: float | None = None) -> None:
    print(f"\nheld by the {name}: {_held(other)}")
    wanted = f" (goal at most {goal}x)" if goal else ""
    print(f"svc's CPU per call at 50 frames a second over the {name}'s{wanted}:")
    for n in svc:
        if not (svc[n][0].frames and other[n][0].frames):
            print(f"  {n:>5} calls: not compared (a server sent no frame in the window)")
            continue
        ratio = _per_call(svc[n]) / _per_call(other[n])
        print(f"  {n:>5} calls: {ratio:5.2f}x  (svc {_per_call(svc[n]) * 100:.3f} %/call, "
              f"{name} {_per_call(other[n]) * 100:.3f} %/call)", flush=True)


def _compared(args: argparse.Namespace, svc: dict[int, Measured]) -> None:
    """``--floor`` and ``--peer``: the same levels against each, and the ratios."""
    if args.floor:
        print("\nfloor: a bare asyncio AudioSocket server (benchmarks/audiosocket_floor.py)")
        floor = _other(args, "floor", sys.executable, "benchmarks.audiosocket_floor", [])
        _compare("floor", svc, floor, FLOOR_GOAL)
    if args.peer and not PEER_PYTHON.exists():
        print(f"\npeer: not installed ({PEER_PYTHON}); run tools/bench-setup-voice-agent")
    elif args.peer:
        print("\npeer: asterisk-ai-voice-agent, instant speech (benchmarks/voice_agent_peer.py)")
        peer = _other(args, "peer", str(PEER_PYTHON), "benchmarks.voice_agent_peer",
                      ["--notice", NOTICE])
        _compare("peer", svc, peer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="50,100,250,500")
    parser.add_argument("--window", type=float, default=6.0, help="seconds measured per N")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds between the last call connecting and the window")
    parser.add_argument("--churn", type=float, default=0.0,
                        help="calls hung up and replaced by new ones per second in the window")
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--client-cpu", type=int, default=1)
    parser.add_argument("--profile", help="profile the measured server (cProfile) into this "
                                           "file, read with python -m pstats")
    parser.add_argument("--hog", action="store_true",
                        help="keep a CPU-bound process busy on the server's core meanwhile")
    parser.add_argument("--floor", action="store_true",
                        help="measure the same levels against a bare asyncio AudioSocket "
                             "server too, and print svc's CPU per call over its")
    parser.add_argument("--peer", action="store_true",
                        help="measure the same levels against asterisk-ai-voice-agent too "
                             "(tools/bench-setup-voice-agent installs it)")
    parser.add_argument("--workers", type=int, default=1,
                        help="svc's worker processes; with more than one, the server is "
                             "not pinned: its workers may run on every core")
    args = parser.parse_args()
    args.levels = [int(n) for n in args.calls.split(",")]
    os.sched_setaffinity(0, {args.client_cpu})
    workdir = Path(tempfile.mkdtemp(prefix="svc-call-load-"))
    postgres = EmbeddedPostgres(workdir / "pg")
    dsn = postgres.start()
    http_port, pbx_port = free_port(), free_port()
    base = f"http://127.0.0.1:{http_port}"
    server = [sys.executable, "-m", "benchmarks.call_load_server", "--dsn", dsn,
              "--port", str(http_port), "--data-dir", str(workdir / "data")]
    pinned = ["--cpu", str(args.server_cpu)] if args.workers == 1 else []
    measured = server + pinned + (["--workers", str(args.workers)] if args.workers > 1 else [])
    if args.profile:
        measured += ["--profile", str(Path(args.profile).resolve())]
    try:
        # First start: set the deployment up; the listen address binds at the next start.
        with process(server + pinned, "svc is serving") as (_, printed):
            password = printed.split("one-time password ")[1].split()[0]
            call, token, agent_id, owner_id = _setup(base, password, pbx_port)
            churned = round(args.churn * args.window)
            lines = {n: _lines(call, token, agent_id, owner_id, n + churned, run)
                     for run, n in enumerate(args.levels)}
        workers = f", {args.workers} workers" if args.workers > 1 else ""
        print(f"svc (benchmarks/call_load_server.py{workers})")
        with process(measured, "svc is serving") as (proc, _), hogging(args.server_cpu,
                                                                        args.hog):
            svc = _levels(psutil.Process(proc.pid), base, pbx_port, lines, args)
        print(f"\nheld by svc (p99 jitter <= {HELD_JITTER_MS:g} ms, no missed slot): "
              f"{_held(svc)}")
        _compared(args, svc)
    finally:
        postgres.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _run(server: psutil.Process, base: str, pbx_port: int, lines: list[str], calls: int,
         args: argparse.Namespace) -> Measured:
    import uvloop

    return uvloop.run(_measured(server, http_url=base, audiosocket=("127.0.0.1", pbx_port),
                                secret=SECRET, lines=lines, calls=calls,
                                ramp_s=max(1.0, calls / 100), window_s=args.window,
                                churn_per_s=args.churn, settle_s=args.settle))


if __name__ == "__main__":
    main()
