"""Providers (``/api/admin/providers``), users' own provider keys
(``/api/profile/provider-keys``), the model names a user may pick (``/api/models``) and
the enabled providers a user may store a key for (``/api/providers``: names and
models only, never an address or a key)."""

from __future__ import annotations

from blacksheep import Request, Response, Router
from pydantic import Field

from app.bundle import Services
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import administrator, signed_in
from app.routes.collections import (admin_changing, admin_deleting, admin_listing,
                                     admin_reading)
from app.services.accounts import Identity
from app.services.providers import public_view


class NewProviderBody(Body):
    name: str
    base_url: str
    api_key: str | None = None
    models: list[str] = Field(default_factory=list, max_length=1000)
    enabled: bool = True


class ProviderChangeBody(Body):
    name: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    models: list[str] | None = Field(default=None, max_length=1000)
    enabled: bool | None = None


class ProviderKeyBody(Body):
    provider_id: str
    api_key: str


list_providers = admin_listing("providers", public_view)


@accepts(NewProviderBody)
async def create_provider(request: Request, svc: Services) -> Response:
    identity = await administrator(request, svc)
    body = await read_body(request, NewProviderBody, svc.max_body_bytes)
    row = await svc.providers.create(actor=identity.account_id, **body.model_dump())
    return json_response(201, public_view(row))


get_provider = admin_reading("providers", "provider_id", public_view)


# api_key sent as null removes the stored key; other nulls mean "unchanged".
change_provider = admin_changing("providers", "provider_id", ProviderChangeBody, public_view,
                                 nullable=("api_key",))


delete_provider = admin_deleting("providers", "provider_id")


async def refresh_provider(request: Request, svc: Services, provider_id: str) -> Response:
    identity = await administrator(request, svc)
    row = await svc.providers.refresh_models(provider_id, actor=identity.account_id)
    return json_response(200, public_view(row))


async def list_models(request: Request, svc: Services) -> Response:
    await signed_in(request, svc)
    return json_response(200, {"data": await svc.providers.model_names()})


async def list_enabled_providers(request: Request, svc: Services) -> Response:
    await signed_in(request, svc)
    rows = [r for r in await svc.providers.list() if r["enabled"]]
    return json_response(200, {"data": [{"id": str(r["id"]), "name": r["name"],
                                         "models": list(r["models"] or ())} for r in rows]})


async def _own_keys(svc: Services, identity: Identity, status: int = 200) -> Response:
    """The caller's own keys: the list, and the answer to storing one."""
    return json_response(status, {"data": await svc.providers.own_keys(identity.account_id)})


async def list_own_keys(request: Request, svc: Services) -> Response:
    return await _own_keys(svc, await signed_in(request, svc))


@accepts(ProviderKeyBody)
async def store_own_key(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, ProviderKeyBody, svc.max_body_bytes)
    await svc.providers.set_own_key(identity.account_id, body.provider_id, body.api_key)
    return await _own_keys(svc, identity, status=201)


async def delete_own_key(request: Request, svc: Services, key_id: str) -> None:
    identity = await signed_in(request, svc)
    await svc.providers.delete_own_key(identity.account_id, key_id)


def register(router: Router) -> None:
    router.add_get("/api/admin/providers", list_providers)
    router.add_post("/api/admin/providers", create_provider)
    router.add_get("/api/admin/providers/{provider_id}", get_provider)
    router.add_patch("/api/admin/providers/{provider_id}", change_provider)
    router.add_delete("/api/admin/providers/{provider_id}", delete_provider)
    router.add_post("/api/admin/providers/{provider_id}/refresh", refresh_provider)
    router.add_get("/api/models", list_models)
    router.add_get("/api/providers", list_enabled_providers)
    router.add_get("/api/profile/provider-keys", list_own_keys)
    router.add_post("/api/profile/provider-keys", store_own_key)
    router.add_delete("/api/profile/provider-keys/{key_id}", delete_own_key)
