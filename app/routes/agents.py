"""Agents (``/api/agents``): create, read, update, archive."""

from __future__ import annotations

from blacksheep import Request, Response, Router
from pydantic import Field

from app.bundle import Services
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import signed_in
from app.routes.collections import reading


class NewAgentBody(Body):
    name: str
    model: str
    instructions: str = Field(default="", max_length=20_000)
    library_ids: list[str] = Field(default_factory=list, max_length=100)
    tools: list[str] = Field(default_factory=list, max_length=100)
    project_id: str | None = None


class AgentChangeBody(Body):
    name: str | None = None
    model: str | None = None
    instructions: str | None = Field(default=None, max_length=20_000)
    library_ids: list[str] | None = Field(default=None, max_length=100)
    tools: list[str] | None = Field(default=None, max_length=100)
    project_id: str | None = None
    archived: bool | None = None


async def list_agents(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    archived = request.query.get("include_archived", ["false"])[0] == "true"
    return json_response(200, {"data": await svc.agents.list(identity, archived)})


@accepts(NewAgentBody)
async def create_agent(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, NewAgentBody, svc.max_body_bytes)
    return json_response(201, await svc.agents.create(identity, body.model_dump()))


get_agent = reading("agents", "agent_id")


@accepts(AgentChangeBody)
async def change_agent(request: Request, svc: Services, agent_id: str) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, AgentChangeBody, svc.max_body_bytes)
    # Only the fields sent change; project_id sent as null detaches the agent.
    changes = body.model_dump(exclude_unset=True)
    return json_response(200, await svc.agents.update(identity, agent_id, changes))


async def archive_agent(request: Request, svc: Services, agent_id: str) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, await svc.agents.update(identity, agent_id, {"archived": True}))


def register(router: Router) -> None:
    router.add_get("/api/agents", list_agents)
    router.add_post("/api/agents", create_agent)
    router.add_get("/api/agents/{agent_id}", get_agent)
    router.add_patch("/api/agents/{agent_id}", change_agent)
    router.add_post("/api/agents/{agent_id}/archive", archive_agent)
