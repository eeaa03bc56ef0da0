"""The order test modules are handed to the workers: the longest first.

Under ``--dist loadfile`` each module runs whole on one worker, and a worker takes the
next module from the front of the queue when it runs low. Handed out longest first, the
short modules at the end fill the gaps and the workers finish together; pytest-xdist's
own order (most tests first) sent one-test modules of a minute each (the offline call,
the OpenAPI fuzzing) to the back, where they ran alone at the end.

``tests/durations.json`` holds each module's measured seconds (module path -> seconds,
from a whole run under ``--dist loadfile``; ``tools/test-durations`` writes it from a
JUnit XML report). A module missing from it (a new one) is estimated from its number
of tests at the measured mean per test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

DURATIONS = Path(__file__).resolve().parent.parent / "durations.json"

Item = TypeVar("Item")


def read_durations(path: Path = DURATIONS) -> dict[str, float]:
    """The measured seconds of each module; none when the file is missing."""
    try:
        return {str(name): float(seconds) for name, seconds in
                json.loads(path.read_text()).items()}
    except FileNotFoundError:
        return {}


def longest_first(items: Sequence[Item], module_of, durations: dict[str, float]) -> list[Item]:
    """``items`` grouped by module, the modules in descending expected seconds.

    ``module_of(item)`` names an item's module as the durations do (a path relative
    to the repository, with forward slashes). Inside a module the items keep their
    order (a browser module's later tests read what its earlier ones made); modules
    expected to take as long keep the order they were collected in."""
    modules: dict[str, list[Item]] = {}
    for item in items:
        modules.setdefault(module_of(item), []).append(item)
    known = [name for name in modules if name in durations]
    tests_known = sum(len(modules[name]) for name in known)
    per_test = sum(durations[name] for name in known) / tests_known if tests_known else 1.0

    def expected(name: str) -> float:
        return durations.get(name, len(modules[name]) * per_test)

    ordered = sorted(modules, key=expected, reverse=True)
    return [item for name in ordered for item in modules[name]]
