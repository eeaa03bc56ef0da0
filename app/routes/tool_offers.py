"""Offering HTTP tools (``/api/admin/tools/{id}/offers``) and the tools a user may use
(``GET /api/tools``).

An administrator offers a tool to one account (``account_id``), to a project's members
(``project_id``) or to everyone (``everyone: true``), one audience per offer, and
withdraws an offer by deleting it. A user's list holds the built-in tools and the HTTP
tools offered to them — what each does, never where it sends or its secret.
"""

from __future__ import annotations

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import administrator, signed_in
from app.services.access import reach_of
from app.services.tools import spec_view


class OfferBody(Body):
    account_id: str | None = None
    project_id: str | None = None
    everyone: bool = False


async def list_usable_tools(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    builtin = [spec_view(spec) for spec in svc.tools.builtin_specs()]
    offered = await svc.tool_offers.offered(await reach_of(identity))
    return json_response(200, {"data": offered, "builtin": builtin})


async def list_offers(request: Request, svc: Services, tool_id: str) -> Response:
    await administrator(request, svc)
    return json_response(200, {"data": await svc.tool_offers.list(tool_id)})


@accepts(OfferBody)
async def offer_tool(request: Request, svc: Services, tool_id: str) -> Response:
    identity = await administrator(request, svc)
    body = await read_body(request, OfferBody, svc.max_body_bytes)
    return json_response(201, await svc.tool_offers.offer(
        tool_id, actor=identity.account_id, account_id=body.account_id,
        project_id=body.project_id, everyone=body.everyone))


async def withdraw_offer(request: Request, svc: Services, tool_id: str,
                         offer_id: str) -> None:
    identity = await administrator(request, svc)
    await svc.tool_offers.withdraw(tool_id, offer_id, actor=identity.account_id)


def register(router: Router) -> None:
    router.add_get("/api/tools", list_usable_tools)
    router.add_get("/api/admin/tools/{tool_id}/offers", list_offers)
    router.add_post("/api/admin/tools/{tool_id}/offers", offer_tool)
    router.add_delete("/api/admin/tools/{tool_id}/offers/{offer_id}", withdraw_offer)
