"""Finding one row of a table by the id a caller gave, for the services whose rows
anyone allowed to call them may see (accounts, providers, HTTP tools), and deleting one
of those rows on the record."""

from __future__ import annotations

__all__ = ["delete_on_record", "find_by_id"]

from typing import Any
from uuid import UUID

from piccolo.table import Table

from app.errors import NotFound
from app.services.audit import AuditLog
from core.ids import id_or_none


async def find_by_id(table: type[Table], value: UUID | str, what: str) -> dict[str, Any]:
    """The row of ``table`` with id ``value``; 404 "No such <what>." when ``value`` is not
    an id (``core.ids``) or no row has it."""
    found = id_or_none(value)
    row = None if found is None else await table.select().where(table.id == found).first()
    if row is None:
        raise NotFound(f"No such {what}.")
    return row


async def delete_on_record(table: type[Table], row: dict[str, Any], audit: AuditLog, what: str,
                           *, actor: UUID) -> None:
    """Delete ``row`` of ``table`` and record ``<what>.deleted`` by ``actor``, with the
    row's name: once the row is gone, the name is what a reader of the trail recognises."""
    await table.delete().where(table.id == row["id"])
    await audit.record(f"{what}.deleted", actor=actor, subject=str(row["id"]),
                       data={"name": row["name"]})
