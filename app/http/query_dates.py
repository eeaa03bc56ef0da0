"""Dates in a query string (``?since=2026-11-01&until=2026-12-01``): a range of whole
days in UTC, ``since`` inclusive and ``until`` exclusive, as the usage dashboard and
the call log read them."""

from __future__ import annotations

import datetime as dt

from blacksheep import Request

from app.errors import Unprocessable


def query_date(request: Request, name: str) -> dt.date | None:
    """The date in query parameter ``name`` (YYYY-MM-DD), None when absent; 422 else."""
    text = request.query.get(name, [None])[0]
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise Unprocessable(f"{name} must be a date, YYYY-MM-DD.", field=name) from None


def checked_range(since: dt.date | None, until: dt.date | None,
                  max_days: int | None = None) -> None:
    """422 unless ``since`` comes before ``until`` (and, with ``max_days``, at most that
    many days apart); a missing end leaves the range open on that side."""
    if since is None or until is None:
        return
    if not since < until:
        raise Unprocessable("since must be before until.", field="since")
    if max_days is not None and (until - since).days > max_days:
        raise Unprocessable(f"since and until may be at most {max_days} days apart.",
                            field="since")


def day_start(day: dt.date) -> dt.datetime:
    """The first instant of ``day`` in UTC."""
    return dt.datetime.combine(day, dt.time(), dt.UTC)
