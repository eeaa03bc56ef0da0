"""Hypothesis strategies shared by the fuzz cases: arbitrary JSON, and JSON shaped
like the request bodies the service reads, so the fuzzers reach past the first check."""

from __future__ import annotations

from hypothesis import strategies as st

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20)
)

#: Any JSON value, nested a few levels deep.
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=12), inner, max_size=4),
    ),
    max_leaves=20,
)


def objects_with(fields: dict[str, st.SearchStrategy]) -> st.SearchStrategy[dict]:
    """JSON objects holding any subset of ``fields`` (each from its own strategy, or
    any JSON value instead), plus the odd unknown key."""
    chosen = {name: st.one_of(strategy, json_values) for name, strategy in fields.items()}
    return st.fixed_dictionaries({}, optional=chosen).flatmap(
        lambda body: st.dictionaries(st.text(max_size=8), json_values, max_size=1).map(
            lambda extra: {**extra, **body}
        )
    )
