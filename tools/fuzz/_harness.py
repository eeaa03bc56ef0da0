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
    """Import ``names`` with coverage instrumentation, so the fuzzer sees their branches."""
    with atheris.instrument_imports():
        return [importlib.import_module(name) for name in names]


@contextlib.contextmanager
def allowed(*errors: type[BaseException]) -> Iterator[None]:
    """Swallow the module's own errors; let every other exception crash the run."""
    try:
        yield
    except errors:
        pass


def run(one_input: Callable[[atheris.FuzzedDataProvider], None]) -> None:
    """Start libFuzzer on ``one_input``; command-line flags go to libFuzzer."""

    def target(data: bytes) -> None:
        one_input(atheris.FuzzedDataProvider(data))

    atheris.Setup(sys.argv, target)
    atheris.Fuzz()
