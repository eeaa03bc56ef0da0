"""Keys the caller presses become one entry: up to ``#`` or a pause."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.voice import KEY_PAUSE_SECONDS, KeyEntry


def test_hash_ends_the_entry_and_is_not_part_of_it():
    keys = KeyEntry()
    assert [keys.press(key, 1.0 + i / 10) for i, key in enumerate("1234")] == [None] * 4
    assert keys.press("#", 2.0) == "Digits pressed: 1234"
    assert keys.deadline is None


def test_a_pause_ends_the_entry():
    keys = KeyEntry()
    keys.press("7", 1.0)
    keys.press("*", 1.5)
    assert keys.deadline == 1.5 + KEY_PAUSE_SECONDS
    assert keys.expire(1.5 + KEY_PAUSE_SECONDS - 0.01) is None
    assert keys.expire(1.5 + KEY_PAUSE_SECONDS) == "Digits pressed: 7*"
    assert keys.expire(9.0) is None


def test_hash_alone_is_a_turn_too():
    assert KeyEntry().press("#", 0.0) == "The caller pressed #."


@given(st.lists(st.sampled_from("0123456789*#ABCD"), max_size=80))
def test_every_key_but_hash_reaches_exactly_one_entry(pressed):
    keys = KeyEntry()
    entries = [keys.press(key, float(i)) for i, key in enumerate(pressed)]
    entries.append(keys.expire(1e9))
    digits = "".join(entry.removeprefix("Digits pressed: ") for entry in entries
                     if entry and entry.startswith("Digits"))
    groups = "".join(pressed).split("#")
    assert digits == "".join(group[:32] for group in groups)
