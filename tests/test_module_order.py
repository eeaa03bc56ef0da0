"""The suite hands its modules to the workers longest first (``tests.support.module_order``)."""

from __future__ import annotations

import json

from tests.support.module_order import longest_first, read_durations


def _module(item: str) -> str:
    return item.split("::")[0]


def test_modules_go_longest_first_and_keep_their_tests_in_order():
    items = ["a.py::1", "a.py::2", "b.py::1", "c.py::1", "c.py::2", "c.py::3"]
    ordered = longest_first(items, _module, {"a.py": 90, "b.py": 120, "c.py": 5})
    assert ordered == ["b.py::1", "a.py::1", "a.py::2", "c.py::1", "c.py::2", "c.py::3"]


def test_a_module_not_measured_is_expected_to_take_its_tests_at_the_mean_pace():
    # 40 s over 5 measured tests: 8 s a test, so the unmeasured c.py's three make 24 s.
    items = ["a.py::1", "a.py::2", "b.py::1", "b.py::2", "b.py::3",
             "c.py::1", "c.py::2", "c.py::3"]
    ordered = longest_first(items, _module, {"a.py": 10, "b.py": 30})
    assert [_module(item) for item in ordered] == ["b.py"] * 3 + ["c.py"] * 3 + ["a.py"] * 2


def test_modules_expected_to_take_as_long_keep_their_collected_order():
    items = ["z.py::1", "y.py::1", "x.py::1"]
    assert longest_first(items, _module, {}) == items


def test_the_durations_are_read_from_their_file_and_none_without_it(tmp_path):
    durations = tmp_path / "durations.json"
    assert read_durations(durations) == {}
    durations.write_text(json.dumps({"tests/test_a.py": 12}))
    assert read_durations(durations) == {"tests/test_a.py": 12.0}


def test_the_shipped_durations_are_read_as_module_paths():
    # A renamed or removed module's entry is harmless (it matches nothing), so this
    # checks the form only.
    durations = read_durations()
    assert len(durations) > 50
    assert all(name.startswith("tests/") and name.endswith(".py") for name in durations)
    assert all(seconds >= 0 for seconds in durations.values())


def test_the_workers_take_the_modules_in_the_order_given(pytestconfig):
    # pytest-xdist's own reordering (most tests first) would undo the order above.
    assert getattr(pytestconfig.option, "loadscopereorder", False) is False
