"""What every long-run fuzz harness shares: the repository on the import path, the
instrumented import of the module under test, and the invariant itself.

A harness hands ``run`` a function of the fuzzer's ``FuzzedDataProvider`` and the
exceptions the module may raise (its own protocol errors). Anything else escaping is a
crash: libFuzzer stops, prints the traceback and writes the input to ``crash-<sha1>``.
Run one with ``python tools/fuzz/fuzz_<name>.py -max_total_time=600 -rss_limit_mb=512``
(see docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import atheris

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def instrumented(*names: str) -> list[ModuleType]:
    """Import the modules under test. ``run`` instruments them (and everything else
    loaded) before fuzzing; ``instrument_imports`` would miss a module some earlier
    import had already loaded."""
    return [importlib.import_module(name) for name in names]


@contextlib.contextmanager
def allowed(*errors: type[BaseException]) -> Iterator[None]:
    """Swallow the module's own errors; let every other exception crash the run."""
    try:
        yield
    except errors:
        pass


# Words the service's JSON readers look for, so built values reach past the first check.
WORDS = ("event", "start", "media", "stop", "mark", "dtmf", "connected", "streamSid",
         "callSid", "payload", "name", "mediaFormat", "encoding", "audio/x-mulaw",
         "sampleRate", "channels", "customParameters", "ticket", "sequenceNumber", "track",
         "model", "messages", "role", "user", "content", "type", "text", "n", "stream",
         "stream_options", "include_usage", "tools", "timezone", "slot_minutes", "hours",
         "weekday", "opens_minute", "closes_minute", "enabled", "lead_minutes",
         "horizon_days", "UTC", "Europe/London")


def json_value(fdp: atheris.FuzzedDataProvider, depth: int = 0) -> object:
    """A JSON value built from the fuzzer's bytes, biased to the words above."""
    kind = fdp.ConsumeIntInRange(0, 7 if depth < 4 else 4)
    if kind == 0:
        return fdp.PickValueInList(list(WORDS))
    if kind == 1:
        return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 24))
    if kind == 2:
        return fdp.ConsumeIntInRange(-2, 2000)
    if kind == 3:
        return fdp.PickValueInList([True, False, None, 1.5, -0.0])
    if kind == 4:
        return fdp.ConsumeInt(8)
    if kind == 5:
        return [json_value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 4))]
    return {fdp.PickValueInList(list(WORDS)) if fdp.ConsumeBool()
            else fdp.ConsumeUnicodeNoSurrogates(6): json_value(fdp, depth + 1)
            for _ in range(fdp.ConsumeIntInRange(0, 6))}


def run(one_input: Callable[[atheris.FuzzedDataProvider], None]) -> None:
    """Start libFuzzer on ``one_input``; command-line flags go to libFuzzer."""

    def target(data: bytes) -> None:
        one_input(atheris.FuzzedDataProvider(data))

    atheris.instrument_all()  # coverage of every function loaded, so branches guide it
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()
