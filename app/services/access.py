"""Loading an account's reach (``core.access``) and applying it to queries.

``reach_of`` asks the database once for the account's projects; ``visible`` turns a
reach into a Piccolo ``where`` clause for tables with ``owner_id`` and ``project_id``;
``require`` raises 404 for a row the caller does not reach, so existence is not leaked.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from piccolo.table import Table

from app.errors import Forbidden, NotFound
from app.services.accounts import Identity
from app.tables import Project, ProjectMember
from core.access import Reach
from core.ids import id_or_none


async def reach_of(identity: Identity) -> Reach:
    return await reach_of_account(identity.account_id, identity.is_admin)


async def reach_of_account(account_id: UUID, is_admin: bool) -> Reach:
    if is_admin:
        return Reach(account_id, frozenset(), True)
    owned = await Project.select(Project.id).where(Project.owner_id == account_id)
    member = await ProjectMember.select(ProjectMember.project_id).where(
        ProjectMember.account_id == account_id)
    projects = {row["id"] for row in owned} | {row["project_id"] for row in member}
    return Reach(account_id, frozenset(projects), False)


def visible(table: type[Table], reach: Reach) -> Any:
    """A where clause selecting the rows of ``table`` the reach covers (None: all)."""
    if reach.is_admin:
        return None
    clause = table.owner_id == reach.account_id
    if reach.project_ids:
        clause = clause | table.project_id.is_in(list(reach.project_ids))
    return clause


def parse_id(value: str | UUID, what: str = "resource") -> UUID:
    """An id from a path; anything that is not an id (``core.ids``) is simply not found."""
    found = id_or_none(value)
    if found is None:
        raise NotFound(f"No such {what}.")
    return found


def require(reach: Reach, row: dict[str, Any] | None, what: str = "resource") -> dict[str, Any]:
    if row is None or not reach.covers(row.get("owner_id"), row.get("project_id")):
        raise NotFound(f"No such {what}.")
    return row


def owner_or_admin(identity: Identity, owner_id: UUID | str | None,
                   message: str = "Not found.") -> None:
    """Anyone but the owner or an administrator gets the same 404 as for nothing at all
    (spec: telephony.md "owner or administrator" rows; routes reach it through
    ``app.http.guards``). ``message`` is the one given for a resource that does not
    exist at all, so both answers are the same."""
    if identity.is_admin:
        return
    if owner_id is None or str(owner_id) != str(identity.account_id):
        raise NotFound(message)


def owner_moves(identity: Identity, owner_id: UUID, what: str) -> None:
    """Moving something into, out of or between projects is its owner's act or an
    administrator's: a project member reaches what the project holds, but taking it
    into a project of their own would let them keep it after they leave."""
    if not identity.is_admin and owner_id != identity.account_id:
        raise Forbidden(f"Only the {what}'s owner or an administrator moves it between "
                        "projects.", code="not_owner", field="project_id")


async def owned_row(identity: Identity, table: type[Table], value: str | UUID, what: str,
                    owner_column: str) -> dict[str, Any]:
    """The row of ``table`` with id ``value`` when ``identity`` owns it (``owner_column``)
    or administers; anything else is the same 404 "No such <what>." as no row at all."""
    row = await table.select().where(table.id == parse_id(value, what)).first()
    if row is None:
        raise NotFound(f"No such {what}.")
    owner_or_admin(identity, row[owner_column], f"No such {what}.")
    return row
