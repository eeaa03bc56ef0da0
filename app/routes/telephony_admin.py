"""Telephony administration: the settings resource, readiness, lines, the call log, and
per-account feature flags.

spec: telephony.md "Endpoints" and "Authentication" — the settings resource and the
preflight are break-glass (super-administrator); lines, the call log and the check need
``telephony.manage``; feature flags are ``config.manage``. Handlers parse, authorise,
call ``svc.telephony`` and render.
"""

from __future__ import annotations

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.errors import Unprocessable
from app.http.bodies import Body, change_body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import break_glass, query_value, with_permission
from app.http.query_dates import checked_range, day_start, query_date
from app.telephony.calls import DEFAULT_PAGE
from app.telephony.features import checked_key
from app.telephony.readiness import report


class TelephonySettingsReadBack(Body):
    """The fields a read shows and a write ignores: accepted, so that a client may send
    back what it read."""

    effective_public_base_url: str | None = None
    carrier_credential_set: bool | None = None
    pbx_listening: bool | None = None
    shared_secret_set: bool | None = None


class TelephonySettingsBody(TelephonySettingsReadBack):
    provider: str | None = None
    public_base_url: str | None = None
    pbx_listen: str | None = None
    #: write-only: reads say only carrier_credential_set
    carrier_credential: str | None = None
    #: write-only: reads say only shared_secret_set
    shared_secret: str | None = None


class NewLineBody(Body):
    e164: str
    agent_id: str
    owner_user_id: str
    provider: str = "carrier"
    label: str | None = None
    greeting: str | None = None
    notice: str | None = None
    transcript_days: int = 0
    log_days: int = 0
    record_calls: bool = False
    recording_days: int = 0
    enabled: bool = False
    deliver_group_chat_id: str | None = None
    transfer_e164: str | None = None


LineChangeBody = change_body(NewLineBody, "LineChangeBody")


class FeatureValueBody(Body):
    value: bool


def _given(body: Body) -> dict:
    """The fields the client sent, explicit nulls included (absent ones are kept)."""
    return {name: getattr(body, name) for name in body.model_fields_set}


# -- settings resource and readiness

async def get_settings(request: Request, svc: Services) -> Response:
    await break_glass(request, svc)
    return json_response(200, await svc.telephony.resource.view())


@accepts(TelephonySettingsBody)
async def put_settings(request: Request, svc: Services) -> Response:
    identity = await break_glass(request, svc)
    body = await read_body(request, TelephonySettingsBody, svc.max_body_bytes)
    fields = {k: v for k, v in _given(body).items()
              if k not in TelephonySettingsReadBack.model_fields}
    return json_response(200, await svc.telephony.resource.change(identity, fields))


async def preflight(request: Request, svc: Services) -> Response:
    await break_glass(request, svc)
    return json_response(200, report(await svc.telephony.readiness.run()))


async def check(request: Request, svc: Services) -> Response:
    await with_permission(request, svc, "telephony.manage")
    return json_response(200, report(await svc.telephony.readiness.run()))


# -- lines

async def list_lines(request: Request, svc: Services) -> Response:
    await with_permission(request, svc, "telephony.manage")
    return json_response(200, {"data": await svc.telephony.lines.list()})


@accepts(NewLineBody)
async def create_line(request: Request, svc: Services) -> Response:
    identity = await with_permission(request, svc, "telephony.manage")
    body = await read_body(request, NewLineBody, svc.max_body_bytes)
    return json_response(201, await svc.telephony.lines.create(identity, _given(body)))


async def get_line(request: Request, svc: Services, line_id: str) -> Response:
    await with_permission(request, svc, "telephony.manage")
    return json_response(200, await svc.telephony.lines.get(line_id))


@accepts(LineChangeBody)
async def change_line(request: Request, svc: Services, line_id: str) -> Response:
    identity = await with_permission(request, svc, "telephony.manage")
    body = await read_body(request, LineChangeBody, svc.max_body_bytes)
    return json_response(200, await svc.telephony.lines.update(identity, line_id, _given(body)))


async def release_line(request: Request, svc: Services, line_id: str) -> None:
    identity = await with_permission(request, svc, "telephony.manage")
    await svc.telephony.lines.delete(identity, line_id)


# -- the call log

async def list_calls(request: Request, svc: Services) -> Response:
    await with_permission(request, svc, "telephony.manage")
    limit_text = query_value(request, "limit")
    try:
        limit = int(limit_text) if limit_text is not None else DEFAULT_PAGE
    except ValueError:
        raise Unprocessable("limit must be a whole number.", field="limit") from None
    since, until = query_date(request, "since"), query_date(request, "until")
    checked_range(since, until)
    page = await svc.telephony.calls.page(
        number_id=query_value(request, "number_id"), outcome=query_value(request, "outcome"),
        before=query_value(request, "before"), limit=limit,
        since=day_start(since) if since else None, until=day_start(until) if until else None,
        caller=query_value(request, "caller"))
    return json_response(200, page)


async def get_call(request: Request, svc: Services, call_id: str) -> Response:
    await with_permission(request, svc, "telephony.manage")
    return json_response(200, await svc.telephony.calls.get(call_id))


# -- per-account feature flags

async def list_features(request: Request, svc: Services, user_id: str) -> Response:
    await with_permission(request, svc, "config.manage")
    account = await svc.accounts.find(user_id)
    return json_response(200, await svc.features.view(account["id"]))


@accepts(FeatureValueBody)
async def set_feature(request: Request, svc: Services, user_id: str, key: str) -> Response:
    identity = await with_permission(request, svc, "config.manage")
    checked_key(key)
    body = await read_body(request, FeatureValueBody, svc.max_body_bytes)
    account = await svc.accounts.find(user_id)
    await svc.features.set_override(identity, account["id"], key, body.value)
    return json_response(200, await svc.features.view(account["id"]))


async def clear_feature(request: Request, svc: Services, user_id: str, key: str) -> Response:
    identity = await with_permission(request, svc, "config.manage")
    checked_key(key)
    account = await svc.accounts.find(user_id)
    await svc.features.clear_override(identity, account["id"], key)
    return json_response(200, await svc.features.view(account["id"]))


def register(router: Router) -> None:
    router.add_get("/api/admin/telephony", get_settings)
    router.add_put("/api/admin/telephony", put_settings)
    router.add_get("/api/admin/telephony/preflight", preflight)
    router.add_get("/api/admin/telephony/check", check)
    router.add_get("/api/admin/telephony/numbers", list_lines)
    router.add_post("/api/admin/telephony/numbers", create_line)
    router.add_get("/api/admin/telephony/numbers/{line_id}", get_line)
    router.add_patch("/api/admin/telephony/numbers/{line_id}", change_line)
    router.add_delete("/api/admin/telephony/numbers/{line_id}", release_line)
    router.add_get("/api/admin/telephony/calls", list_calls)
    router.add_get("/api/admin/telephony/calls/{call_id}", get_call)
    router.add_get("/api/admin/users/{user_id}/features", list_features)
    router.add_put("/api/admin/users/{user_id}/features/{key}", set_feature)
    router.add_delete("/api/admin/users/{user_id}/features/{key}", clear_feature)
