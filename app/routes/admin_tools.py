"""HTTP tools (``/api/admin/tools``): administrators connect, change and remove them.

A tool is a name, a description the model reads, a JSON schema of its arguments, and
where to send them (url, method, optionally a secret header). ``side_effecting`` and
``usable_on_call`` decide whether a telephone call may use it (spec: telephony.md
"Tools on a call"). The secret header's value is write-only: stored sealed, never
returned, only ``secret_header_set``. The list also shows the built-in tools.
"""

from __future__ import annotations

from typing import Any

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.http.bodies import Body, change_body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import administrator
from app.routes.collections import admin_changing, admin_deleting, admin_reading
from app.services.tools import public_view, spec_view


class NewToolBody(Body):
    name: str
    description: str
    parameters: dict[str, Any]
    url: str
    method: str = "POST"
    secret_header_name: str | None = None
    secret_header_value: str | None = None
    side_effecting: bool = True
    usable_on_call: bool = False


ToolChangeBody = change_body(NewToolBody, "ToolChangeBody")

# Fields where null means "remove" (a null secret value removes its header name too);
# for the others null is no change.
_NULLABLE = ("secret_header_name", "secret_header_value")


async def list_tools(request: Request, svc: Services) -> Response:
    await administrator(request, svc)
    builtin = [spec_view(spec) for spec in svc.tools.builtin_specs()]
    rows = await svc.http_tools.list()
    return json_response(200, {"data": [public_view(r) for r in rows], "builtin": builtin})


@accepts(NewToolBody)
async def create_tool(request: Request, svc: Services) -> Response:
    identity = await administrator(request, svc)
    body = await read_body(request, NewToolBody, svc.max_body_bytes)
    row = await svc.http_tools.create(actor=identity.account_id, fields=body.model_dump())
    return json_response(201, public_view(row))


get_tool = admin_reading("http_tools", "tool_id", public_view)


change_tool = admin_changing("http_tools", "tool_id", ToolChangeBody, public_view,
                             nullable=_NULLABLE)


delete_tool = admin_deleting("http_tools", "tool_id")


def register(router: Router) -> None:
    router.add_get("/api/admin/tools", list_tools)
    router.add_post("/api/admin/tools", create_tool)
    router.add_get("/api/admin/tools/{tool_id}", get_tool)
    router.add_patch("/api/admin/tools/{tool_id}", change_tool)
    router.add_delete("/api/admin/tools/{tool_id}", delete_tool)
