"""The SQL of a filtered, paged listing: values numbered in order, never in the text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.services.listing import Condition, below, equals, listing_query, where


def test_no_filters_lists_everything_in_order():
    assert listing_query("SELECT id FROM enquiry", [None, None], order_by="id") == (
        "SELECT id FROM enquiry ORDER BY id", [])


def test_filters_a_cursor_and_a_limit_are_numbered_in_order():
    sql, args = listing_query(
        "SELECT id FROM telephony_call",
        [equals("number_id", "n-1"), equals("outcome", None),
         below(("started_at", "id"), ("t", "c")), where("state <> 'cancelled'")],
        order_by="started_at DESC, id DESC", limit=51)
    assert sql == ("SELECT id FROM telephony_call WHERE number_id = $1 AND "
                   "(started_at, id) < ($2, $3) AND state <> 'cancelled' "
                   "ORDER BY started_at DESC, id DESC LIMIT $4")
    assert args == ["n-1", "t", "c", 51]


def test_a_value_never_reaches_the_sql_text():
    hostile = "x'; DROP TABLE enquiry; --"
    sql, args = listing_query("SELECT id FROM enquiry", [equals("status", hostile)],
                              order_by="id", limit=5)
    assert hostile not in sql and args == [hostile, 5]


@pytest.mark.parametrize("column", ["status; --", "Status", "a b", "", "1st"])
def test_column_names_are_checked(column):
    with pytest.raises(ValueError, match="not a column name"):
        equals(column, 1)
    with pytest.raises(ValueError, match="not a column name"):
        below((column,), (1,))


def test_a_condition_has_one_place_per_value():
    with pytest.raises(ValueError, match="one"):
        where("ends_at > {}")
    with pytest.raises(ValueError, match="one"):
        Condition("a = {} AND b = {}", (1,))
    with pytest.raises(ValueError, match="one value per column"):
        below(("started_at", "id"), ("t",))


_conditions = st.lists(st.one_of(
    st.none(),
    st.tuples(st.sampled_from(["a", "b_c", "d2"]), st.integers()).map(lambda cv: equals(*cv)),
    st.lists(st.integers(), min_size=1, max_size=3).map(
        lambda values: below([f"c{i}" for i in range(len(values))], values)),
    st.just(where("state <> 'cancelled'")),
), max_size=6)


@given(_conditions, st.one_of(st.none(), st.integers(1, 500)))
def test_placeholders_count_up_from_one_and_match_the_values(conditions, limit):
    sql, args = listing_query("SELECT id FROM t", conditions, order_by="id", limit=limit)
    places = [int(n) for n in re.findall(r"\$(\d+)", sql)]
    assert places == list(range(1, len(args) + 1))
    expected = [value for c in conditions if c is not None for value in c.values]
    assert args == expected + ([limit] if limit is not None else [])
    assert ("WHERE" in sql) == any(c is not None for c in conditions)
