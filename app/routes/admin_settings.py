"""Runtime settings (``/api/admin/settings``): list, read, change, reset to boot.

Anyone who may change some setting may read the list; each entry says whether this
caller may change it. Credentials show only whether one is stored. ``PATCH`` changes
several settings at once (the console saves an area's settings together): every value
is checked first, and if any is refused nothing changes and the 422 lists each refused
setting under ``error.errors``.
"""

from __future__ import annotations

from typing import Any

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.errors import Forbidden, NotFound
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.errors import Forbidden, NotFound, Unprocessable
from app.http.errors import json_response
from app.http.guards import signed_in
from app.services.accounts import Identity
from core import settings as registry


class SettingValueBody(Body):
    value: Any


class SettingValuesBody(Body):
    #: setting key -> new value (null clears a nullable setting)
    values: dict[str, Any]


async def _reader(request: Request, svc: Services) -> Identity:
    identity = await signed_in(request, svc)
    if not (identity.is_admin or identity.permissions):
        raise Forbidden("This needs an administrator or a configuration permission.",
                        code="permission_required")
    return identity


async def list_settings(request: Request, svc: Services) -> Response:
    identity = await _reader(request, svc)
    snapshot = await svc.settings.snapshot()
    views = [svc.settings.describe(s, snapshot, identity) for s in registry.REGISTRY.values()]
    areas = [{"name": name, "title": title, "summary": summary}
             for name, (title, summary) in registry.AREAS.items()]
    return json_response(200, {"data": views, "areas": areas})


async def get_setting(request: Request, svc: Services, key: str) -> Response:
    identity = await _reader(request, svc)
    if key not in registry.REGISTRY:
        raise NotFound(f"No setting {key!r}.")
    snapshot = await svc.settings.snapshot()
    return json_response(200, svc.settings.describe(registry.REGISTRY[key], snapshot, identity))


@accepts(SettingValueBody)
async def put_setting(request: Request, svc: Services, key: str) -> Response:
    identity = await _reader(request, svc)
    body = await read_body(request, SettingValueBody, svc.max_body_bytes)
    await svc.settings.change(identity, key, body.value)
    return await get_setting(request, svc, key)


@accepts(SettingValuesBody)
async def patch_settings(request: Request, svc: Services) -> Response:
    identity = await _reader(request, svc)
    body = await read_body(request, SettingValuesBody, svc.max_body_bytes)
    if not body.values:
        raise Unprocessable("Name at least one setting to change.", code="required",
                            field="values")
    await svc.settings.change_many(identity, body.values)
    snapshot = await svc.settings.snapshot()
    return json_response(200, {"data": [
        svc.settings.describe(registry.REGISTRY[key], snapshot, identity) for key in body.values]})


async def reset_setting(request: Request, svc: Services, key: str) -> Response:
    identity = await _reader(request, svc)
    await svc.settings.reset(identity, key)
    return await get_setting(request, svc, key)


def register(router: Router) -> None:
    router.add_get("/api/admin/settings", list_settings)
    router.add_patch("/api/admin/settings", patch_settings)
    router.add_get("/api/admin/settings/{key}", get_setting)
    router.add_put("/api/admin/settings/{key}", put_setting)
    router.add_delete("/api/admin/settings/{key}", reset_setting)
