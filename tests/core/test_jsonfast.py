"""The hot path's JSON accepts and writes what the standard library did."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import jsonfast

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_values)
def test_what_it_writes_reads_back_as_the_standard_library_reads_it(value):
    assert jsonfast.loads(jsonfast.dumps(value)) == json.loads(jsonfast.dumps(value)) == value


def test_what_orjson_refuses_goes_through_the_standard_library():
    assert jsonfast.loads(b'{"a":"\\ud800","n":123456789012345678901234567890}') == {
        "a": "\ud800", "n": 123456789012345678901234567890}
    assert jsonfast.dumps({"a": "\ud800"}) == b'{"a":"\\ud800"}'
    with pytest.raises(ValueError):
        jsonfast.loads(b"{not json")
    with pytest.raises(RecursionError):
        jsonfast.loads(b"[" * 100_000)
