"""Withheld numbers are told from callers' numbers (``core.withheld_numbers``)."""

from __future__ import annotations

import pytest

from core.withheld_numbers import is_withheld


@pytest.mark.parametrize("reported", ["", "   ", None, "anonymous", "Anonymous", "RESTRICTED",
                                      "private", "unknown", "unavailable", "withheld",
                                      "blocked", "+266696687", "+7378742833", "+8656696",
                                      "+2562533", "+86282452253"])
def test_what_names_nobody_is_withheld(reported):
    assert is_withheld(reported)


@pytest.mark.parametrize("reported", ["+447700900123", "+12025550123", "201", "alice"])
def test_a_number_an_extension_or_a_name_is_a_caller(reported):
    assert not is_withheld(reported)
