"""Enquiries: messages taken on calls, and the owner's handling of them.

spec: telephony.md "Endpoints" — ``/api/enquiries`` and ``/api/enquiries/{id}`` (GET,
PATCH; owner or administrator), ``/api/admin/telephony/enquiries`` (telephony.manage);
"Outward notifications" — ``message_taken``. An enquiry keeps the caller's number,
name, subject, message and the call; it is never removed by retention or erasure and
drops its reference to the call when the call goes (``ON DELETE SET NULL``).

Status (ours; the spec leaves it open): ``new`` when taken, ``in_hand`` while someone
deals with it, ``done``; any status may follow any other, and a note (at most 2000
characters, null clears it) records what was done.
"""

from __future__ import annotations

__all__ = ["STATUSES", "Enquiries", "enquiry_view"]

from typing import Any
from uuid import UUID

from app import db
from app.errors import NotFound, Unprocessable
from app.notify.outbox import enqueue
from app.services.access import parse_id
from app.services.call_context import CallContext
from app.services.listing import equals, listing_query
from core.notifications import EventKind, notification_text

STATUSES = ("new", "in_hand", "done")
MAX_NAME, MAX_SUBJECT, MAX_MESSAGE, MAX_NOTE = 200, 500, 4000, 2000
DEFAULT_LIMIT, MAX_LIMIT = 100, 500

_COLUMNS = """
id, account_id, call_id, caller_number, caller_name, subject, message, status, note,
created_at, updated_at
"""


def enquiry_view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "account_id": str(row["account_id"]),
        "call_id": str(row["call_id"]) if row["call_id"] else None,
        "caller_number": row["caller_number"],
        "caller_name": row["caller_name"],
        "subject": row["subject"],
        "message": row["message"],
        "status": row["status"],
        "note": row["note"],
        "created_at": row["created_at"].isoformat(),
        "updated_at": row["updated_at"].isoformat(),
    }


def _cut(value: str | None, limit: int) -> str | None:
    value = " ".join((value or "").split())
    return value[:limit] or None


class Enquiries:
    """Taking messages on a call, and listing and handling them."""

    async def take(self, call: CallContext, *, caller_name: str | None, subject: str,
                   message: str) -> dict[str, Any]:
        """Store a message taken on ``call`` and its ``message_taken`` notification, in one
        transaction. What the caller said is cut to the column limits, never refused:
        a message is worth keeping even when long."""
        name = _cut(caller_name, MAX_NAME)
        about = _cut(subject, MAX_SUBJECT) or "No subject given"
        text = (message or "").strip()[:MAX_MESSAGE] or about
        async with db.connection() as connection, connection.transaction():
            row = dict(await connection.fetchrow(
                f"INSERT INTO enquiry (account_id, call_id, caller_number, caller_name, subject, "
                f"message) VALUES ($1, $2, $3, $4, $5, $6) RETURNING {_COLUMNS}",
                call.account_id, call.call_id, call.caller_number, name, about, text))
            await enqueue(connection, account_id=call.account_id,
                          event=EventKind.MESSAGE_TAKEN.value,
                          text=notification_text(EventKind.MESSAGE_TAKEN, caller_name=name,
                                                 caller_number=call.caller_number,
                                                 subject=about),
                          subject_id=row["id"])
        return row

    async def list(self, account_id: UUID | None, *, status: str | None = None,
                   limit: int = DEFAULT_LIMIT) -> list[dict[str, Any]]:
        """Newest first; ``account_id`` None lists every account's (telephony.manage)."""
        if status is not None and status not in STATUSES:
            raise Unprocessable(f"status must be one of {', '.join(STATUSES)}.", field="status")
        sql, args = listing_query(
            f"SELECT {_COLUMNS} FROM enquiry",
            [equals("account_id", account_id), equals("status", status)],
            order_by="created_at DESC, id DESC", limit=limit)
        async with db.connection() as connection:
            rows = await connection.fetch(sql, *args)
        return [enquiry_view(dict(row)) for row in rows]

    async def get(self, account_id: UUID | None, enquiry_id: str) -> dict[str, Any]:
        """One enquiry of ``account_id`` (any account's for None: an administrator)."""
        async with db.connection() as connection:
            row = await connection.fetchrow(
                f"SELECT {_COLUMNS} FROM enquiry WHERE id = $1", parse_id(enquiry_id, "enquiry"))
        if row is None or (account_id is not None and row["account_id"] != account_id):
            raise NotFound("No such enquiry.")
        return enquiry_view(dict(row))

    async def change(self, account_id: UUID | None, enquiry_id: str,
                     changes: dict[str, Any]) -> dict[str, Any]:
        """Set ``status`` and/or ``note`` (an explicit null note clears it)."""
        current = await self.get(account_id, enquiry_id)
        status = changes.get("status", current["status"])
        if status not in STATUSES:
            raise Unprocessable(f"status must be one of {', '.join(STATUSES)}.", field="status")
        note = changes.get("note", current["note"])
        if note is not None and len(note) > MAX_NOTE:
            raise Unprocessable(f"note: at most {MAX_NOTE} characters.", field="note")
        async with db.connection() as connection:
            row = await connection.fetchrow(
                f"UPDATE enquiry SET status = $2, note = $3, updated_at = now() WHERE id = $1 "
                f"RETURNING {_COLUMNS}", UUID(current["id"]), status, note)
        return enquiry_view(dict(row))
