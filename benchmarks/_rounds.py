"""CPU time per call of several awaitables, measured in interleaved rounds.

Shared by the in-process ``/v1`` benchmarks (``v1_dispatch.py``, ``v1_governance.py``):
each round times every contender in turn, so a change in the machine's load during the
run touches them all alike, and the median of the rounds is what they print.
"""

from __future__ import annotations

__all__ = ["cpu_us_per_call"]

import time
from collections.abc import Awaitable, Callable, Mapping


async def cpu_us_per_call(contenders: Mapping[str, Callable[[], Awaitable[object]]],
                          calls: int, rounds: int) -> dict[str, list[float]]:
    """Each contender's thread CPU time per call, in µs, one figure per round."""
    figures: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, call in contenders.items():
            started = time.thread_time()
            for _ in range(calls):
                await call()
            figures[name].append((time.thread_time() - started) / calls * 1e6)
    return figures
