"""Names for the audit trail's ids, so an entry can be read as a sentence: who acted
(an account's email) and what on (an agent's or Library's name, a line's number).

An entry keeps ids only — names change, and the trail is append-only — so the names
are looked up when the trail is read, one query per kind of thing on the page. What no
longer exists has no name; the reader falls back to what the entry's data recorded.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from uuid import UUID

from app import db
from core.ids import is_id

# The first part of an entry's kind -> the table and column that name its subject.
_SUBJECT_NAMES: dict[str, tuple[str, str]] = {
    "account": ("account", "email"),
    "feature": ("account", "email"),  # feature.override.*: the subject is the account
    "agent": ("agent", "name"),
    "library": ("library", "name"),
    "provider": ("provider", "name"),
    "project": ("project", "name"),
    "document": ("document", "title"),
    "telephony.line": ("telephony_line", "e164"),
}


def _subject_table(kind: str) -> tuple[str, str] | None:
    for prefix, named_by in _SUBJECT_NAMES.items():
        if kind.startswith(prefix + "."):
            return named_by
    return None


async def _names(connection: Any, table: str, column: str, ids: set[UUID]) -> dict[str, str]:
    rows = await connection.fetch(
        f"SELECT id, {column} AS name FROM {table} WHERE id = ANY($1::uuid[])", list(ids))
    return {str(row["id"]): row["name"] for row in rows}


async def name_entries(rows: list[dict[str, Any]]) -> list[tuple[str | None, str | None]]:
    """For each row, in order: the actor's email and the subject's name (or None)."""
    wanted: dict[tuple[str, str], set[UUID]] = defaultdict(set)
    for row in rows:
        if row["actor_id"]:
            wanted[("account", "email")].add(row["actor_id"])
        named_by = _subject_table(row["kind"])
        if named_by and row["subject"] and is_id(row["subject"]):
            wanted[named_by].add(UUID(row["subject"]))
    found: dict[tuple[str, str], dict[str, str]] = {}
    if wanted:
        async with db.connection() as connection:
            for (table, column), ids in wanted.items():
                found[(table, column)] = await _names(connection, table, column, ids)
    emails = found.get(("account", "email"), {})
    named: list[tuple[str | None, str | None]] = []
    for row in rows:
        named_by = _subject_table(row["kind"])
        subject = found.get(named_by, {}).get(row["subject"] or "") if named_by else None
        named.append((emails.get(str(row["actor_id"])) if row["actor_id"] else None, subject))
    return named
