"""The usage dashboard's data (``/api/admin/usage``): totals by day, user, key, line,
model, source, and by day and source together (``by_day_source``), over a date range (``since`` inclusive, ``until`` exclusive; default the last 30
days)."""

from __future__ import annotations

import datetime as dt

from blacksheep import Request, Response, Router

from app.http.errors import Unprocessable, json_response
from app.http.guards import administrator
from app.services.bundle import Services

GROUPINGS = ("day", "source", "user", "key", "line", "model", "day_source")
MAX_DAYS = 366


def _date(request: Request, name: str, default: dt.date) -> dt.date:
    text = request.query.get(name, [None])[0]
    if text is None:
        return default
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise Unprocessable(f"{name} must be a date, YYYY-MM-DD.", field=name) from None


async def usage_totals(request: Request, svc: Services) -> Response:
    await administrator(request, svc)
    today = dt.datetime.now(dt.UTC).date()
    until = _date(request, "until", today + dt.timedelta(days=1))
    since = _date(request, "since", until - dt.timedelta(days=30))
    if not since < until or (until - since).days > MAX_DAYS:
        raise Unprocessable(f"since must be before until, at most {MAX_DAYS} days apart.",
                            field="since")
    start = dt.datetime.combine(since, dt.time(), dt.UTC)
    end = dt.datetime.combine(until, dt.time(), dt.UTC)
    payload = {"since": since.isoformat(), "until": until.isoformat()}
    for grouping in GROUPINGS:
        payload[f"by_{grouping}"] = await svc.usage.totals(start, end, grouping)
    return json_response(200, payload)


def register(router: Router) -> None:
    router.add_get("/api/admin/usage", usage_totals)
