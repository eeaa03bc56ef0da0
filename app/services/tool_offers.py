"""Which HTTP tools each account may attach to its agents: the administrators' offers.

An HTTP tool calls someone's service, perhaps with a secret header, so it is not
everyone's to use: an administrator offers it to an account, to a project's members,
or to everyone (``/api/admin/tools/{id}/offers``), and withdraws the offer again.

- Attaching (``check_attachable``): an ordinary account may name a built-in tool or an
  HTTP tool offered to it; any other name — a tool not offered to it, or no tool at
  all, which an administrator might create under that name later — is refused like
  an unknown one, so the refusal does not reveal which tools exist. Names an agent
  already has are kept: a withdrawn offer stops new attachments, and an agent that
  must lose a tool is changed by an administrator, or the tool deleted. Administrators
  attach any tool.
- Listing (``offered``): ``GET /api/tools`` shows a user only the tools offered to
  them, without the address or anything of the secret.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any
from uuid import UUID

import asyncpg

from app.errors import Conflict, NotFound, Unprocessable
from app.services.access import parse_id
from app.services.audit import AuditLog
from app.services.tools import ToolRegistry
from app.tables import Account, HttpTool, HttpToolOffer, Project
from core.access import Reach
from core.ids import id_or_none


def offer_view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "tool_id": str(row["tool_id"]),
        "account_id": str(row["account_id"]) if row["account_id"] else None,
        "project_id": str(row["project_id"]) if row["project_id"] else None,
        "everyone": row["account_id"] is None and row["project_id"] is None,
        "offered_at": row["offered_at"].isoformat(),
    }


def user_view(row: dict[str, Any]) -> dict[str, Any]:
    """A tool as an account it is offered to sees it: what it does, not where it goes."""
    return {"name": row["name"], "description": row["description"],
            "parameters": row["parameters"], "side_effecting": row["side_effecting"],
            "usable_on_call": row["usable_on_call"]}


def _audience(reach: Reach) -> Any:
    """Offers that reach this account: to it, to one of its projects, to everyone."""
    clause = (HttpToolOffer.account_id == reach.account_id) | (
        HttpToolOffer.account_id.is_null() & HttpToolOffer.project_id.is_null())
    if reach.project_ids:
        clause |= HttpToolOffer.project_id.is_in(list(reach.project_ids))
    return clause


class ToolOffers:
    def __init__(self, audit: AuditLog, registry: ToolRegistry) -> None:
        self.audit = audit
        self.registry = registry

    async def _offered_rows(self, reach: Reach) -> list[dict[str, Any]]:
        if reach.is_admin:
            query = HttpTool.select()
        else:
            offers = await HttpToolOffer.select(HttpToolOffer.tool_id).where(_audience(reach))
            ids = list({row["tool_id"] for row in offers})
            if not ids:
                return []
            query = HttpTool.select().where(HttpTool.id.is_in(ids))
        return await query.order_by(HttpTool.name).output(load_json=True)

    async def offered(self, reach: Reach) -> list[dict[str, Any]]:
        """The HTTP tools this account may attach (all of them for an administrator)."""
        return [user_view(row) for row in await self._offered_rows(reach)]

    async def check_attachable(self, reach: Reach, names: Collection[str],
                               kept: Collection[str] = ()) -> None:
        """422 on the first name this account may not newly attach (see the module)."""
        if reach.is_admin:
            return
        new = [name for name in names if name not in kept and not self.registry.is_builtin(name)]
        if not new:
            return
        allowed = {row["name"] for row in await self._offered_rows(reach)}
        for name in new:
            if name not in allowed:
                raise Unprocessable(f"No such tool: {name!r}.", code="unknown_tool",
                                    field="tools")

    # -- the administrators' side

    async def _tool(self, tool_id: str | UUID) -> UUID:
        found = await HttpTool.select(HttpTool.id).where(
            HttpTool.id == parse_id(tool_id, "tool")).first()
        if found is None:
            raise NotFound("No such tool.")
        return found["id"]

    async def list(self, tool_id: str) -> list[dict[str, Any]]:
        rows = await HttpToolOffer.select().where(
            HttpToolOffer.tool_id == await self._tool(tool_id)).order_by(HttpToolOffer.offered_at)
        return [offer_view(row) for row in rows]

    async def _target(self, table: Any, field: str, value: str | None) -> UUID | None:
        if value is None:
            return None
        found = id_or_none(value)
        if found is None or not await table.exists().where(table.id == found):
            raise Unprocessable(f"No such {field.removesuffix('_id')}.", field=field)
        return found

    async def offer(self, tool_id: str, *, actor: UUID, account_id: str | None = None,
                    project_id: str | None = None, everyone: bool = False) -> dict[str, Any]:
        """Offer the tool to exactly one audience; offering it twice is a conflict."""
        if (account_id is not None) + (project_id is not None) + bool(everyone) != 1:
            raise Unprocessable("Offer to one of account_id, project_id or everyone.",
                                code="one_audience", field="account_id")
        tool = await self._tool(tool_id)
        row = HttpToolOffer(tool_id=tool, offered_by=actor,
                            account_id=await self._target(Account, "account_id", account_id),
                            project_id=await self._target(Project, "project_id", project_id))
        try:
            await row.save()
        except asyncpg.UniqueViolationError:
            raise Conflict("The tool is already offered there.",
                           code="already_offered") from None
        view = offer_view(await HttpToolOffer.select().where(HttpToolOffer.id == row.id).first())
        await self.audit.record("http_tool.offered", actor=actor, subject=str(tool), data=view)
        return view

    async def withdraw(self, tool_id: str, offer_id: str, *, actor: UUID) -> None:
        tool = await self._tool(tool_id)
        removed = await HttpToolOffer.delete().where(
            (HttpToolOffer.id == parse_id(offer_id, "offer"))
            & (HttpToolOffer.tool_id == tool)).returning(HttpToolOffer.id)
        if not removed:
            raise NotFound("No such offer.")
        await self.audit.record("http_tool.withdrawn", actor=actor, subject=str(tool),
                                data={"offer_id": offer_id})

