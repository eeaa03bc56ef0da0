"""Account administration (``/api/admin/users``): list, create, change grants, deactivate.

Administrators manage ordinary accounts; only the super-administrator may create,
promote or change administrators, so an administrator cannot raise anyone above
themselves.
"""

from __future__ import annotations

from blacksheep import Request, Response, Router
from pydantic import Field

from app.bundle import Services
from app.errors import Forbidden, Unprocessable
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import administrator
from app.routes.collections import admin_reading
from app.services.accounts import Identity, public_view


class NewAccountBody(Body):
    email: str
    password: str
    role: str = "user"
    permissions: list[str] = Field(default_factory=list)


class AccountChangeBody(Body):
    role: str | None = None
    permissions: list[str] | None = None
    deactivated: bool | None = None


def _may_touch(identity: Identity, role: str) -> None:
    if role != "user" and not identity.is_superadmin:
        raise Forbidden("Only the super-administrator manages administrators.",
                        code="superadmin_required")


async def list_users(request: Request, svc: Services) -> Response:
    await administrator(request, svc)
    return json_response(200, {"data": [public_view(row) for row in await svc.accounts.list()]})


@accepts(NewAccountBody)
async def create_user(request: Request, svc: Services) -> Response:
    identity = await administrator(request, svc)
    body = await read_body(request, NewAccountBody, svc.max_body_bytes)
    _may_touch(identity, body.role)
    row = await svc.accounts.create(body.email, body.password, body.role, body.permissions,
                                    actor=identity.account_id)
    return json_response(201, public_view(row))


get_user = admin_reading("accounts", "user_id", public_view)


@accepts(AccountChangeBody)
async def change_user(request: Request, svc: Services, user_id: str) -> Response:
    identity = await administrator(request, svc)
    body = await read_body(request, AccountChangeBody, svc.max_body_bytes)
    current = await svc.accounts.find(user_id)
    if current["id"] == identity.account_id and (body.deactivated or body.role not in (
            None, current["role"])):
        raise Unprocessable("You cannot deactivate or demote your own account.",
                            code="own_account", field="deactivated" if body.deactivated else "role")
    _may_touch(identity, current["role"])
    if body.role is not None:
        _may_touch(identity, body.role)
    row = await svc.accounts.update(current["id"], actor=identity.account_id, role=body.role,
                                    permissions=body.permissions, deactivated=body.deactivated)
    if body.deactivated:
        await svc.sessions.close_all(current["id"])
    return json_response(200, public_view(row))


def register(router: Router) -> None:
    router.add_get("/api/admin/users", list_users)
    router.add_post("/api/admin/users", create_user)
    router.add_get("/api/admin/users/{user_id}", get_user)
    router.add_patch("/api/admin/users/{user_id}", change_user)
