"""The long-run harnesses under tools/fuzz still run: each one's input function takes
a handful of inputs without crashing (so a renamed API cannot leave them broken
until the next long run). Skipped where the optional ``fuzz`` extra is not installed."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

atheris = pytest.importorskip("atheris")

HARNESSES = sorted(p.stem for p in (Path(__file__).parents[2] / "tools" / "fuzz").glob("fuzz_*.py"))
INPUTS = [b"", b"\x00", b"\x01\x00\x10" + bytes(16), b'{"model":"m","messages":[{}]}',
          bytes(range(256)), b"data: [DONE]\n\n" * 3, b"https://[::1/voice?x=%ff"]


@pytest.fixture(scope="module", autouse=True)
def _harness_path():
    sys.path.insert(0, str(Path(__file__).parents[2] / "tools" / "fuzz"))
    yield
    sys.path.remove(str(Path(__file__).parents[2] / "tools" / "fuzz"))


def test_every_parser_has_a_harness():
    assert len(HARNESSES) >= 9


@pytest.mark.parametrize("name", HARNESSES)
def test_the_harness_takes_inputs_without_crashing(name):
    harness = importlib.import_module(name)
    for data in INPUTS:
        harness.one_input(atheris.FuzzedDataProvider(data))
