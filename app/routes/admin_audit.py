"""The audit trail (``/api/admin/audit``): newest first, filtered and paged.

Filters: ``kind`` (one kind exactly), ``actor_id`` (who acted), ``since`` and ``until``
(ISO 8601 with an offset; ``until`` exclusive), ``limit`` (default 100, at most 1000).
Paging: a full page carries ``next_before``, the cursor to pass as ``before`` for the
older entries that follow it.

Each entry carries ``actor_email`` and ``subject_name`` (``app.services.audit_names``)
so it reads as a sentence; either is null when there is none or it no longer exists.
``occurrences`` is how many times the entry happened: 1, or more for a counted entry
(the repeats of one refusal from one source in one window, ``AuditLog.tally``)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from uuid import UUID

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.errors import Unprocessable
from app.http.errors import json_response
from app.http.guards import administrator, query_value
from app.http.query_values import BIGINT_MAX, whole_number
from app.services.audit_names import name_entries
from core.ids import id_or_none

MAX_LIMIT = 1000


def _instant(request: Request, field: str) -> dt.datetime | None:
    text = query_value(request, field)
    if text is None:
        return None
    try:
        instant = dt.datetime.fromisoformat(text)
    except ValueError:
        raise Unprocessable(f"{field} must be an ISO 8601 time.", field=field) from None
    if instant.tzinfo is None:
        raise Unprocessable(f"{field} needs a time zone offset, e.g. Z.", field=field)
    return instant


def _actor(request: Request) -> UUID | None:
    text = query_value(request, "actor_id")
    if text is None:
        return None
    actor = id_or_none(text)
    if actor is None:
        raise Unprocessable("actor_id must be an account id.", field="actor_id")
    return actor


def _before(request: Request) -> int | None:
    """The cursor of the next page: the entries before this one; none when absent."""
    text = query_value(request, "before")
    return whole_number(text, "before", default=0, most=BIGINT_MAX) if text else None


def _filters(request: Request) -> dict[str, Any]:
    filters = {"kind": query_value(request, "kind"), "actor": _actor(request),
               "since": _instant(request, "since"), "until": _instant(request, "until"),
               "before": _before(request),
               "limit": whole_number(query_value(request, "limit"), "limit", default=100,
                                     most=MAX_LIMIT)}
    if filters["since"] and filters["until"] and filters["until"] <= filters["since"]:
        raise Unprocessable("until must be later than since.", field="until")
    return filters


async def list_audit(request: Request, svc: Services) -> Response:
    await administrator(request, svc)
    filters = _filters(request)
    rows = await svc.audit.query(**filters)
    names = await name_entries(rows)
    entries = [{
        "id": row["id"],
        "kind": row["kind"],
        "actor_id": str(row["actor_id"]) if row["actor_id"] else None,
        "actor_email": actor_email,
        "subject": row["subject"],
        "subject_name": subject_name,
        "data": json.loads(row["data"]) if isinstance(row["data"], str) else row["data"],
        "at": row["at"].isoformat(),
        "occurrences": row["occurrences"],
    } for row, (actor_email, subject_name) in zip(rows, names)]
    full = len(rows) == filters["limit"]
    return json_response(200, {"data": entries,
                               "next_before": rows[-1]["id"] if full else None})


def register(router: Router) -> None:
    router.add_get("/api/admin/audit", list_audit)
