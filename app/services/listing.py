"""Filtered, ordered, paged listings as one parameterised ``SELECT``.

The listings of enquiries, calls and appointments each narrow a table by the filters a
request gave, order it, and take a page. ``listing_query`` writes that statement:
each ``Condition`` carries its SQL with ``{}`` where a value goes and the values
themselves, which become ``$1``, ``$2`` … in order, so a value is never spliced into
the text. A filter the request left out is ``None`` and drops out of the ``WHERE``.

Column names and SQL fragments come from the code, never from a request; ``equals``
and ``below`` check the names they are given all the same.
"""

from __future__ import annotations

__all__ = ["Condition", "below", "equals", "listing_query", "where"]

import re
from collections.abc import Iterable, Sequence
from typing import Any

from core.records import frozen

_NAME = re.compile(r"[a-z_][a-z0-9_]*")


@frozen
class Condition:
    """One ``WHERE`` term: ``sql`` with a ``{}`` for each of ``values``."""

    sql: str
    values: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.sql.count("{}") != len(self.values):
            raise ValueError(f"{self.sql!r} has not one {{}} per value ({len(self.values)})")


def where(sql: str, *values: Any) -> Condition:
    """A term written out, e.g. ``where("ends_at > {}", since)``."""
    return Condition(sql, values)


def equals(column: str, value: Any) -> Condition | None:
    """``column = value``; None (no filter) when ``value`` is None."""
    if value is None:
        return None
    return Condition(f"{_name(column)} = {{}}", (value,))


def below(columns: Sequence[str], values: Sequence[Any]) -> Condition:
    """The rows that sort below a cursor's ``values`` over ``columns`` (the next page
    of a descending order): a row value comparison, which an index on those columns
    answers directly."""
    if len(columns) != len(values) or not columns:
        raise ValueError("a cursor needs one value per column")
    names = ", ".join(_name(column) for column in columns)
    return Condition(f"({names}) < ({', '.join('{}' for _ in values)})", tuple(values))


def listing_query(select_from: str, conditions: Iterable[Condition | None], *,
                  order_by: str, limit: int | None = None) -> tuple[str, list[Any]]:
    """``select_from`` (``SELECT … FROM table``) narrowed by every condition that is
    not None, ordered, and cut to ``limit`` rows when given: the SQL and its values."""
    args: list[Any] = []
    terms = []
    for condition in conditions:
        if condition is None:
            continue
        places = []
        for value in condition.values:
            args.append(value)
            places.append(f"${len(args)}")
        terms.append(condition.sql.format(*places))
    sql = select_from
    if terms:
        sql += " WHERE " + " AND ".join(terms)
    sql += f" ORDER BY {order_by}"
    if limit is not None:
        args.append(limit)
        sql += f" LIMIT ${len(args)}"
    return sql, args


def _name(column: str) -> str:
    if not _NAME.fullmatch(column):
        raise ValueError(f"{column!r} is not a column name")
    return column
