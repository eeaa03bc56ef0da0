"""Agents: a name, instructions, a model, the Libraries it reads and the tools it may use.

An agent belongs to its owner and optionally to a project; the access rule decides who
reaches it. Its Libraries must be ones the writer reaches, its model must resolve. An
archived agent is kept (its chats still open) but cannot be called.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Iterable
from uuid import UUID

from app.errors import Conflict, NotFound, Unprocessable
from app.services.access import owner_moves, parse_id, reach_of, require, visible
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.services.projects import placement, project_names
from app.services.providers import Providers
from app.services.tool_offers import ToolOffers
from app.tables import Agent, AgentLibrary, Library
from core.access import Reach

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class AgentUnavailable(NotFound, code="agent_unavailable"):
    """The agent exists and is reachable but archived."""


def public_view(row: dict[str, Any], library_ids: list[UUID],
                project_name: str | None = None) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "name": row["name"],
        "instructions": row["instructions"],
        "model": row["model"],
        **placement(row, project_name),
        "library_ids": [str(i) for i in library_ids],
        "tools": list(row["tools"] or ()),
        "tool_count": len(row["tools"] or ()),
        "archived": row["archived_at"] is not None,
        "created_at": row["created_at"].isoformat(),
        "updated_at": row["updated_at"].isoformat(),
    }


class Agents:
    def __init__(self, audit: AuditLog, providers: Providers, offers: ToolOffers) -> None:
        self.audit = audit
        self.providers = providers
        self.offers = offers

    async def library_ids(self, agent_id: UUID) -> list[UUID]:
        rows = await AgentLibrary.select(AgentLibrary.library_id).where(
            AgentLibrary.agent_id == agent_id)
        return [row["library_id"] for row in rows]

    async def _row(self, reach: Reach, agent_id: str | UUID) -> dict[str, Any]:
        row = await Agent.select().where(Agent.id == parse_id(agent_id, "agent")).first()
        return require(reach, row, "agent")

    async def view(self, row: dict[str, Any],
                   names: dict[UUID, str] | None = None) -> dict[str, Any]:
        """The agent's view; ``names`` are its project's name by id when already known."""
        if names is None:
            names = await project_names([row["project_id"]])
        return public_view(row, await self.library_ids(row["id"]), names.get(row["project_id"]))

    async def get(self, identity: Identity, agent_id: str) -> dict[str, Any]:
        return await self.view(await self._row(await reach_of(identity), agent_id))

    async def callable(self, reach: Reach, agent_id: str | UUID) -> dict[str, Any]:
        """The agent row for a call, or 404: unreachable, or archived (agent_unavailable)."""
        row = await self._row(reach, agent_id)
        if row["archived_at"] is not None:
            raise AgentUnavailable("This agent is archived and cannot be called.")
        return row

    async def list(self, identity: Identity, include_archived: bool = False) -> list[dict[str, Any]]:
        reach = await reach_of(identity)
        query = Agent.select().order_by(Agent.name)
        clause = visible(Agent, reach)
        if clause is not None:
            query = query.where(clause)
        if not include_archived:
            query = query.where(Agent.archived_at.is_null())
        rows = await query
        names = await project_names(row["project_id"] for row in rows)
        return [await self.view(row, names) for row in rows]

    async def listed_for(self, reach: Reach) -> list[dict[str, Any]]:
        """Callable agents the reach covers (for /v1/models)."""
        query = Agent.select(Agent.id, Agent.created_at, Agent.owner_id, Agent.name).where(
            Agent.archived_at.is_null()).order_by(Agent.created_at)
        clause = visible(Agent, reach)
        return await (query.where(clause) if clause is not None else query)

    async def _check(self, reach: Reach, fields: dict[str, Any],
                     kept_tools: Iterable[str] = ()) -> dict[str, Any]:
        """Check the given fields; ``kept_tools`` are the tools the agent already has,
        which stay attachable whatever the offers say now."""
        for name in ("name", "model", "instructions", "library_ids", "tools", "archived"):
            if name in fields and fields[name] is None:
                raise Unprocessable(f"{name} cannot be null.", field=name)
        if "name" in fields and not 1 <= len(fields["name"].strip()) <= 200:
            raise Unprocessable("An agent name has 1 to 200 characters.", field="name")
        if "model" in fields:
            await self.providers.resolve(fields["model"], None)
        if fields.get("project_id") is not None:
            project = parse_id(fields["project_id"], "project")
            if not (reach.is_admin or project in reach.project_ids):
                raise Unprocessable("You are not a member of that project.", field="project_id")
            fields["project_id"] = project
        if "tools" in fields:
            bad = [t for t in fields["tools"] if not _TOOL_NAME.match(t)]
            if bad:
                raise Unprocessable(f"Not a tool name: {bad[0]!r}.", field="tools")
            fields["tools"] = sorted(set(fields["tools"]))
            await self.offers.check_attachable(reach, fields["tools"], set(kept_tools))
        if "library_ids" in fields:
            fields["library_ids"] = await self._reachable_libraries(reach, fields["library_ids"])
        return fields

    async def _reachable_libraries(self, reach: Reach, ids: Iterable[str]) -> list[UUID]:
        wanted = []
        for text in ids:
            try:
                wanted.append(UUID(str(text)))
            except ValueError:
                raise Unprocessable(f"Not a Library id: {text!r}.", field="library_ids") from None
        if not wanted:
            return []
        rows = await Library.select(Library.id, Library.owner_id, Library.project_id).where(
            Library.id.is_in(wanted))
        found = {row["id"] for row in rows if reach.covers(row["owner_id"], row["project_id"])}
        missing = [str(i) for i in wanted if i not in found]
        if missing:
            raise Unprocessable(f"No such Library: {missing[0]}.", field="library_ids")
        return sorted(set(wanted))

    async def _set_libraries(self, agent_id: UUID, library_ids: list[UUID]) -> None:
        await AgentLibrary.delete().where(AgentLibrary.agent_id == agent_id)
        if library_ids:
            await AgentLibrary.insert(*[AgentLibrary(agent_id=agent_id, library_id=lib)
                                        for lib in library_ids])

    async def create(self, identity: Identity, fields: dict[str, Any]) -> dict[str, Any]:
        reach = await reach_of(identity)
        fields = await self._check(reach, dict(fields))
        await _name_free(identity.account_id, fields["name"])
        row = Agent(name=fields["name"].strip(), instructions=fields.get("instructions", ""),
                    model=fields["model"], owner_id=identity.account_id,
                    project_id=fields.get("project_id"), tools=fields.get("tools", []))
        async with Agent._meta.db.transaction():
            await row.save()
            await self._set_libraries(row.id, fields.get("library_ids", []))
        await self.audit.record("agent.created", actor=identity.account_id, subject=str(row.id))
        return await self.get(identity, str(row.id))

    async def update(self, identity: Identity, agent_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        reach = await reach_of(identity)
        row = await self._row(reach, agent_id)
        fields = await self._check(reach, dict(fields), row["tools"] or ())
        if "project_id" in fields and fields["project_id"] != row["project_id"]:
            owner_moves(identity, row["owner_id"], "agent")
        naming = "name" in fields or (fields.get("archived") is False
                                      and row["archived_at"] is not None)
        if naming and not fields.get("archived") and row["owner_id"] == identity.account_id:
            await _name_free(row["owner_id"], fields.get("name", row["name"]), but=row["id"])
        values: dict[Any, Any] = {Agent.updated_at: dt.datetime.now(dt.UTC)}
        for name in ("name", "instructions", "model", "project_id", "tools"):
            if name in fields:
                value = fields[name].strip() if name == "name" else fields[name]
                values[getattr(Agent, name)] = value
        if "archived" in fields:
            values[Agent.archived_at] = dt.datetime.now(dt.UTC) if fields["archived"] else None
        async with Agent._meta.db.transaction():
            await Agent.update(values).where(Agent.id == row["id"])
            if "library_ids" in fields:
                await self._set_libraries(row["id"], fields["library_ids"])
        await self.audit.record("agent.changed", actor=identity.account_id,
                                subject=str(row["id"]), data={"fields": sorted(fields)})
        return await self.get(identity, agent_id)


async def _name_free(owner_id: UUID, name: str, but: UUID | None = None) -> None:
    """Refuse a name another of the owner's agents in use already has (any case): two
    alike could not be told apart in the lists that offer them, a line's among them.
    An archived agent gives its name up. Checked for the owner's own naming only: a
    project member or an administrator renaming it would otherwise learn the names of
    the owner's agents they cannot see."""
    in_use = Agent.select(Agent.name).where(
        (Agent.owner_id == owner_id) & Agent.archived_at.is_null())
    if but is not None:
        in_use = in_use.where(Agent.id != but)
    wanted = name.strip().casefold()
    if any(row["name"].casefold() == wanted for row in await in_use):
        raise Conflict("You have an agent with this name. Choose another name, or archive "
                       "that agent first.", code="name_taken", field="name")
