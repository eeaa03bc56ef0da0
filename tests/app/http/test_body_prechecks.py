"""The cheap checks on a body's raw bytes never let through what the walks of its
decoded value would refuse (``app.http.bodies``): a NUL or a lone surrogate, however
written, and nesting past the limit."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.http.bodies import (
    MAX_JSON_DEPTH,
    JsonProblem,
    may_hold_unstorable,
    parse_json,
    unstorable_at,
)

_texts = st.text(alphabet=st.sampled_from(["a", "é", "\x00", "\ud800", "\udfff", "한", "\n"]),
                 max_size=6)


@given(st.dictionaries(_texts, st.one_of(_texts, st.lists(_texts, max_size=3)), max_size=3),
       st.booleans())
def test_whatever_the_walk_refuses_the_raw_bytes_flag(value, ascii_only):
    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    if unstorable_at(json.loads(raw)) is not None:
        assert may_hold_unstorable(raw)


@pytest.mark.parametrize("raw", [
    b'{"a": "\\u0000"}', b'{"a": "\\ud800"}', b'{"a": "\xed\xa0\x80"}',
    '{"a": "x"}'.encode("utf-16"),
])
def test_each_way_of_writing_them_is_flagged(raw):
    assert may_hold_unstorable(raw)


def test_an_ordinary_body_is_not_walked():
    assert not may_hold_unstorable(b'{"model": "m", "messages": [{"role": "user", '
                                   b'"content": "caf\xc3\xa9 \\n"}]}')


def test_nesting_past_the_limit_is_still_refused_and_at_the_limit_accepted():
    deep = b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(JsonProblem):
        parse_json(deep)
    assert parse_json(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH)
    # Brackets inside strings count towards the cheap check but not the depth.
    assert parse_json(b'{"a": "' + b"[" * 200 + b'"}') == {"a": "[" * 200}
