"""Columns many tables declare alike, written once: when a row was written and changed.

Piccolo copies a mixin's columns into each table that names it, so each table still
has columns of its own; a mixin's columns come first in the table's column list. The
SQL migrations stay the source of truth: these only spell the same columns once.
(``AccountOwned``, for the rows an account owns, stands with ``Account``.)
"""

from __future__ import annotations

from piccolo.columns import Timestamptz
from piccolo.columns.defaults.timestamptz import TimestamptzNow


class Created:
    """When the row was written."""

    created_at = Timestamptz(default=TimestamptzNow())


class Stamped(Created):
    """When the row was written and when it last changed."""

    updated_at = Timestamptz(default=TimestamptzNow())

