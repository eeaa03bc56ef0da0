"""API key management: in the profile for the owner, and the administrator's view
(``/api/profile/api-keys``, ``/api/admin/users/{id}/api-keys``, ``/api/admin/api-keys/{id}``).

The value is shown once, in the answer to minting; nothing can show it again. Behind
``features.public_api`` like ``/v1`` (see ``app.public_api.gate``).
"""

from __future__ import annotations

from blacksheep import Request, Response, Router
from pydantic import Field

from app.bundle import Services
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import administrator, signed_in


class NewKeyBody(Body):
    name: str = Field(max_length=200)
    expires_in_days: int | None = None


async def list_keys(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, {"data": await svc.api_keys.list_for(identity.account_id)})


@accepts(NewKeyBody)
async def mint_key(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, NewKeyBody, svc.max_body_bytes)
    view, value = await svc.api_keys.mint(identity, body.name, body.expires_in_days)
    return json_response(201, {**view, "key": value,
                               "notice": "Copy this key now: it will not be shown again."})


async def revoke_own_key(request: Request, svc: Services, key_id: str) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, await svc.api_keys.revoke(identity, key_id))


async def list_user_keys(request: Request, svc: Services, user_id: str) -> Response:
    await administrator(request, svc)
    account = await svc.accounts.find(user_id)
    return json_response(200, {"data": await svc.api_keys.list_for(account["id"])})


async def revoke_any_key(request: Request, svc: Services, key_id: str) -> Response:
    identity = await administrator(request, svc)
    return json_response(200, await svc.api_keys.revoke(identity, key_id, as_admin=True))


def register(router: Router) -> None:
    router.add_get("/api/profile/api-keys", list_keys)
    router.add_post("/api/profile/api-keys", mint_key)
    router.add_delete("/api/profile/api-keys/{key_id}", revoke_own_key)
    router.add_get("/api/admin/users/{user_id}/api-keys", list_user_keys)
    router.add_delete("/api/admin/api-keys/{key_id}", revoke_any_key)
