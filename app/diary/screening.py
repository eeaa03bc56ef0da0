"""The screening list (``/api/conflict-names``) and checking a caller against it.

spec: telephony.md "Screening list" — names pasted one per line with an optional
note applied to every name of that request; at most 2000 names per request, each cut
at 200 characters; names already present skipped. "While an account keeps a list, a
call on its lines cannot be put through to anybody until checked and clear." "The
list is never read out and the caller is never told a check happened. A holder of
``telephony.manage`` sees that a list exists and its size, not its names."

Normal forms and matching are ``core.screening``'s. The database keeps one row per
normal form of an account (a unique constraint), so two pastes at once cannot add a
name twice: the second's insert skips it.
"""

from __future__ import annotations

__all__ = ["MAX_NOTE", "ScreeningList"]

from typing import Any
from uuid import UUID

from app import db
from app.errors import NotFound, Unprocessable
from app.services.access import parse_id
from app.services.audit import AuditLog
from core.screening import (
    MAX_NAMES_PER_REQUEST,
    ScreeningError,
    Verdict,
    check_name,
    normalise_name,
    parse_pasted_names,
)

MAX_NOTE = 500
# A paste is at most 2000 names of 200 characters; a body far beyond that is not one.
MAX_PASTE_CHARACTERS = MAX_NAMES_PER_REQUEST * 220

_INSERT = """
INSERT INTO screening_name (account_id, name, normal_form, note)
SELECT $1, name, normal_form, $4 FROM unnest($2::text[], $3::text[]) AS pasted(name, normal_form)
ON CONFLICT (account_id, normal_form) DO NOTHING
"""


def _name_view(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": str(row["id"]), "name": row["name"], "note": row["note"],
            "created_at": row["created_at"].isoformat()}


class ScreeningList:
    """An account's screening list: the owner's use cases and the check on a call."""

    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit

    async def size(self, account_id: UUID) -> int:
        """How many names the account keeps; 0 means it keeps no list."""
        async with db.connection() as connection:
            return await connection.fetchval(
                "SELECT count(*) FROM screening_name WHERE account_id = $1", account_id)

    async def summary(self, account_id: UUID) -> dict[str, Any]:
        """What a holder of telephony.manage may see: that a list exists, and its size."""
        count = await self.size(account_id)
        return {"account_id": str(account_id), "exists": count > 0, "count": count}

    async def view(self, account_id: UUID) -> dict[str, Any]:
        """The list with its names, for the owner or an administrator."""
        async with db.connection() as connection:
            rows = await connection.fetch(
                "SELECT id, name, note, created_at FROM screening_name WHERE account_id = $1 "
                "ORDER BY lower(name), id", account_id)
        return {"account_id": str(account_id), "exists": bool(rows), "count": len(rows),
                "names": [_name_view(dict(row)) for row in rows]}

    async def add(self, account_id: UUID, names: str, note: str | None, *,
                  actor: UUID) -> dict[str, Any]:
        """Add pasted names; the answer counts those added and those skipped."""
        if len(names) > MAX_PASTE_CHARACTERS:
            raise Unprocessable(f"At most {MAX_NAMES_PER_REQUEST} names per request.",
                                code="too_many_names", field="names")
        if note is not None and len(note) > MAX_NOTE:
            raise Unprocessable(f"note: at most {MAX_NOTE} characters.", field="note")
        async with db.connection() as connection, connection.transaction():
            present = [row["normal_form"] for row in await connection.fetch(
                "SELECT normal_form FROM screening_name WHERE account_id = $1", account_id)]
            try:
                pasted = parse_pasted_names(names, present)
            except ScreeningError as error:
                raise Unprocessable(f"{error}.", code=error.code, field="names") from None
            status = await connection.execute(
                _INSERT, account_id, [n.name for n in pasted.added],
                [n.normal_form for n in pasted.added], (note or "").strip() or None)
            added = int(status.rsplit(" ", 1)[-1])
            count = await connection.fetchval(
                "SELECT count(*) FROM screening_name WHERE account_id = $1", account_id)
        skipped = pasted.skipped + (pasted.added_count - added)
        # Counts only: the names themselves never go into the audit trail.
        await self.audit.record("screening.names.added", actor=actor, subject=str(account_id),
                                data={"added": added, "skipped": skipped})
        return {"added": added, "skipped": skipped, "count": count}

    async def remove(self, account_id: UUID, *, names: str | None = None,
                     everything: bool = False, name_id: str | None = None,
                     actor: UUID) -> dict[str, Any]:
        """Remove one name by id, pasted names (by normal form), or the whole list."""
        async with db.connection() as connection, connection.transaction():
            if name_id is not None:
                removed = await connection.fetchval(
                    "DELETE FROM screening_name WHERE account_id = $1 AND id = $2 RETURNING id",
                    account_id, parse_id(name_id, "name"))
                if removed is None:
                    raise NotFound("No such name.")
                status = "DELETE 1"
            elif everything:
                status = await connection.execute(
                    "DELETE FROM screening_name WHERE account_id = $1", account_id)
            else:
                forms = sorted({normalise_name(line) for line in (names or "").splitlines()} - {""})
                if not forms:
                    raise Unprocessable("Give the names to remove, one per line, or all: true.",
                                        field="names")
                status = await connection.execute(
                    "DELETE FROM screening_name WHERE account_id = $1 "
                    "AND normal_form = ANY($2::text[])", account_id, forms)
            count = await connection.fetchval(
                "SELECT count(*) FROM screening_name WHERE account_id = $1", account_id)
        removed_count = int(status.rsplit(" ", 1)[-1])
        await self.audit.record("screening.names.removed", actor=actor, subject=str(account_id),
                                data={"removed": removed_count})
        return {"removed": removed_count, "count": count}

    async def check(self, account_id: UUID, caller_name: str | None) -> tuple[bool, Verdict]:
        """Whether the account keeps a list, and the verdict on ``caller_name``."""
        async with db.connection() as connection:
            forms = [row["normal_form"] for row in await connection.fetch(
                "SELECT normal_form FROM screening_name WHERE account_id = $1", account_id)]
        return bool(forms), check_name(caller_name, forms)
