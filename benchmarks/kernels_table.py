"""Print the kernel benchmark table: cost per 20 ms frame, bulk throughput, ratios, goals.

    .venv/bin/python benchmarks/kernels_table.py               # timings (about a minute)
    .venv/bin/python benchmarks/kernels_table.py --callgrind   # and instructions per frame

Per-frame rows give the cost of one call on a 20 ms frame (the best of several
repeats, as timeit advises: the rest is the machine's noise) and, for the
stateful streaming calls, the 99th percentile of single calls. Ratios are ours
divided by the peer's (lower is better). Bulk rows convert 60 s of audio in one
call; ratios there are the peer's time divided by ours (higher is better).
With --callgrind every per-frame contender also runs under valgrind's callgrind,
counting only inside the C loop that makes the calls (itertools.starmap), so
the figure is instructions per call, interpreter overhead included, and no
noise of a shared machine can move it.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import platform
import re
import subprocess
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

import _cases  # noqa: E402  (after the path set-up above)

REPEATS = 15
FRAME_SECONDS_PER_REPEAT = 0.02
BULK_REPEATS = 3
P99_CALLS = 20000
CALLGRIND_CALLS = 2000


def best_seconds_per_call(contenders: dict, bulk: bool) -> dict[str, float]:
    """Best mean over REPEATS, contenders interleaved (in turn first) so drifts hit them alike."""
    loops = {}
    for name, call in contenders.items():
        call()  # warm up (and size the loop)
        timer = timeit.Timer(call)
        loops[name] = 1 if bulk else max(10, int(FRAME_SECONDS_PER_REPEAT / max(timer.timeit(20) / 20, 1e-9)))
    best = dict.fromkeys(contenders, float("inf"))
    names = list(contenders)
    for round_ in range(BULK_REPEATS if bulk else REPEATS):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            seconds = timeit.Timer(contenders[name]).timeit(loops[name]) / loops[name]
            best[name] = min(best[name], seconds)
    return best


def p99_seconds(call) -> float:
    clock = time.perf_counter_ns
    samples = []
    for _ in range(P99_CALLS):
        start = clock()
        call()
        samples.append(clock() - start)
    samples.sort()
    return samples[int(len(samples) * 0.99)] / 1e9


def instructions_per_call(case, contender: str) -> float | None:
    """Callgrind's instruction count for one call of a per-frame contender."""
    command = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        "--collect-atstart=no", "--toggle-collect=starmap_next",
        sys.executable, __file__, "--run", case.name, contender, str(CALLGRIND_CALLS),
    ]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    match = re.search(r"Collected : (\d+)", result.stderr)
    return int(match.group(1)) / CALLGRIND_CALLS if match else None


def run_calls(case_name: str, contender: str, calls: int) -> None:
    """Entry point under valgrind: build one per-frame case, call one contender ``calls`` times."""
    call = _cases.find_case(case_name, bulk=False).contenders[contender]
    collections.deque(itertools.starmap(call, itertools.repeat((), calls)), maxlen=0)


def header() -> str:
    import numpy
    import soxr

    import kernels.ulaw

    compiled = kernels.ulaw.lin2ulaw.__module__ == "kernels._ulaw_c"
    return "\n".join([
        f"date: {time.strftime('%Y-%m-%d %H:%M %Z')}",
        f"machine: {platform.machine()}, {_cpu_model()}, {os.cpu_count()} cores",
        f"python {platform.python_version()}, numpy {numpy.__version__}, soxr {soxr.__version__},"
        f" audioop from {_cases.audioop.__file__.rsplit('/', 3)[-3]}",
        f"kernels: {'compiled' if compiled else 'pure-Python twins'}",
    ])


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def format_frame_case(case, with_callgrind: bool) -> tuple[list[str], list[tuple]]:
    times = best_seconds_per_call(case.contenders, bulk=False)
    ours = times["ours"]
    lines = [f"{case.name}, per 20 ms frame ({case.samples} samples in)"]
    for name, seconds in times.items():
        cells = [f"  {name:<18}{seconds * 1e6:9.3f} us"]
        cells.append(f"{ours / seconds:7.2f}x" if name != "ours" else " " * 8)
        if case.streaming:
            cells.append(f"p99 {p99_seconds(case.contenders[name]) * 1e6:8.3f} us")
        if with_callgrind:
            count = instructions_per_call(case, name)
            cells.append(f"{count:9.0f} instr" if count is not None else "   (no valgrind)")
        lines.append("  ".join(cells))
    return lines, [(case, goal, ours, times[goal.peer]) for goal in case.goals]


def format_bulk_case(case) -> tuple[list[str], list[tuple]]:
    times = best_seconds_per_call(case.contenders, bulk=True)
    ours = times["ours"]
    lines = [f"{case.name}, bulk ({_cases.BULK_SECONDS} s, {case.samples} samples in)"]
    for name, seconds in times.items():
        rate = case.samples / seconds / 1e6
        ratio = f"{seconds / ours:7.2f}x" if name != "ours" else " " * 8
        lines.append(f"  {name:<18}{seconds * 1e3:9.2f} ms  {ratio}  {rate:8.1f} Msamples/s")
    return lines, [(case, goal, ours, times[goal.peer]) for goal in case.goals]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--callgrind", action="store_true", help="also count instructions per frame")
    parser.add_argument("--run", nargs=3, metavar=("CASE", "CONTENDER", "CALLS"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.run:
        case_name, contender, calls = arguments.run
        run_calls(case_name, contender, int(calls))
        return

    print(header())
    print("per-frame ratio: ours / contender (lower is better); bulk ratio: contender / ours")
    print()
    verdicts = []
    for case in _cases.all_cases():
        if case.bulk:
            lines, goals = format_bulk_case(case)
        else:
            lines, goals = format_frame_case(case, arguments.callgrind)
        print("\n".join(lines), flush=True)
        verdicts += goals
    print()
    print("goals")
    for case, goal, ours, theirs in verdicts:
        kind = "bulk" if case.bulk else "frame"
        ratio = theirs / ours if case.bulk else ours / theirs
        verdict = "met" if goal.met(ours, theirs) else "NOT MET"
        print(f"  {case.name:<22}{kind:<6} {ratio:6.2f}x  (goal {goal.describe()})  {verdict}")


if __name__ == "__main__":
    main()
