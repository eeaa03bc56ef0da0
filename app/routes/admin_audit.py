"""The audit trail (``/api/admin/audit``): newest first, filtered by kind and time.

``occurrences`` is how many times the entry happened: 1, or more for a counted entry (the
repeats of one refusal from one source in one window, ``AuditLog.tally``)."""

from __future__ import annotations

import datetime as dt
import json

from blacksheep import Request, Response, Router

from app.http.errors import Unprocessable, json_response
from app.http.guards import administrator
from app.services.bundle import Services

MAX_LIMIT = 1000


def _query_params(request: Request) -> tuple[str | None, dt.datetime | None, int]:
    kind = request.query.get("kind", [None])[0]
    since_text = request.query.get("since", [None])[0]
    limit_text = request.query.get("limit", ["100"])[0]
    since = None
    if since_text is not None:
        try:
            since = dt.datetime.fromisoformat(since_text)
        except ValueError:
            raise Unprocessable("since must be an ISO 8601 time.", field="since") from None
        if since.tzinfo is None:
            raise Unprocessable("since needs a time zone offset, e.g. Z.", field="since")
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIMIT:
        raise Unprocessable(f"limit must be 1 to {MAX_LIMIT}.", field="limit")
    return kind, since, int(limit_text)


async def list_audit(request: Request, svc: Services) -> Response:
    await administrator(request, svc)
    kind, since, limit = _query_params(request)
    rows = await svc.audit.query(kind=kind, since=since, limit=limit)
    entries = [{
        "id": row["id"],
        "kind": row["kind"],
        "actor_id": str(row["actor_id"]) if row["actor_id"] else None,
        "subject": row["subject"],
        "data": json.loads(row["data"]) if isinstance(row["data"], str) else row["data"],
        "at": row["at"].isoformat(),
        "occurrences": row["occurrences"],
    } for row in rows]
    return json_response(200, {"data": entries})


def register(router: Router) -> None:
    router.add_get("/api/admin/audit", list_audit)
