"""Notification targets (``/api/notify-targets``): owner or administrator.

spec: telephony.md "Notification target" and the endpoint table — "Targets, url
reduced to host"; ``POST /api/notify-targets/{id}/test`` sends a live test. The url
is write-only; a webhook target's signing secret is shown once, in the answer that
made or rotated it. An administrator may name another account with ``account_id``
(query for the list, body for a new target); anyone else sees only their own, and
another account's target answers 404. ``GET …/{id}/attempts`` lists the latest
attempts to post to a target, so its owner can see why news does not arrive.
"""

from __future__ import annotations

from typing import Any

from blacksheep import Request, Response, Router
from pydantic import Field

from app.bundle import Services
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import signed_in
from app.routes.collections import deleting, reading

_SECRET_NOTICE = ("Copy signing_secret now: it will not be shown again. The receiver checks "
                  "X-Svc-Signature with it.")


class NewTargetBody(Body):
    kind: str
    url: str = Field(max_length=2000)
    events: list[str] | None = None
    label: str | None = None
    enabled: bool = True
    account_id: str | None = None


class TargetChangeBody(Body):
    url: str | None = Field(default=None, max_length=2000)
    events: list[str] | None = None
    #: null removes the label
    label: str | None = None
    enabled: bool | None = None
    rotate_secret: bool | None = None


def _with_secret(view: dict[str, Any], signing: str | None) -> dict[str, Any]:
    if signing is None:
        return view
    return {**view, "signing_secret": signing, "notice": _SECRET_NOTICE}


async def list_targets(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    account_id = request.query.get("account_id", [None])[0]
    return json_response(200, {"data": await svc.notify_targets.list(identity, account_id)})


@accepts(NewTargetBody)
async def create_target(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, NewTargetBody, svc.max_body_bytes)
    view, signing = await svc.notify_targets.create(identity, **body.model_dump())
    return json_response(201, _with_secret(view, signing))


get_target = reading("notify_targets", "target_id")


@accepts(TargetChangeBody)
async def change_target(request: Request, svc: Services, target_id: str) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, TargetChangeBody, svc.max_body_bytes)
    # null is "no change" except for the label, where it removes it
    changes = {name: getattr(body, name) for name in body.model_fields_set
               if getattr(body, name) is not None or name == "label"}
    view, signing = await svc.notify_targets.update(identity, target_id, changes)
    return json_response(200, _with_secret(view, signing))


delete_target = deleting("notify_targets", "target_id")


async def test_target(request: Request, svc: Services, target_id: str) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, await svc.notify_targets.test(identity, target_id))


async def list_attempts(request: Request, svc: Services, target_id: str) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, {"data": await svc.notify_targets.attempts(identity, target_id)})


def register(router: Router) -> None:
    router.add_get("/api/notify-targets", list_targets)
    router.add_post("/api/notify-targets", create_target)
    router.add_get("/api/notify-targets/{target_id}", get_target)
    router.add_patch("/api/notify-targets/{target_id}", change_target)
    router.add_delete("/api/notify-targets/{target_id}", delete_target)
    router.add_post("/api/notify-targets/{target_id}/test", test_target)
    router.add_get("/api/notify-targets/{target_id}/attempts", list_attempts)
