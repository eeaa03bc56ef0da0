"""The usage dashboard's data (``/api/admin/usage``): totals by day, user, key, line,
model, source, and by day and source together (``by_day_source``), over a date range (``since`` inclusive, ``until`` exclusive; default the last 30
days)."""

from __future__ import annotations

import datetime as dt

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.http.errors import json_response
from app.http.guards import administrator
from app.http.query_dates import checked_range, day_start, query_date

GROUPINGS = ("day", "source", "user", "key", "line", "model", "day_source")
MAX_DAYS = 366


async def usage_totals(request: Request, svc: Services) -> Response:
    await administrator(request, svc)
    today = dt.datetime.now(dt.UTC).date()
    until = query_date(request, "until") or today + dt.timedelta(days=1)
    since = query_date(request, "since") or until - dt.timedelta(days=30)
    checked_range(since, until, MAX_DAYS)
    start, end = day_start(since), day_start(until)
    payload = {"since": since.isoformat(), "until": until.isoformat()}
    for grouping in GROUPINGS:
        payload[f"by_{grouping}"] = await svc.usage.totals(start, end, grouping)
    return json_response(200, payload)


def register(router: Router) -> None:
    router.add_get("/api/admin/usage", usage_totals)
