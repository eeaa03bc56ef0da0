"""The screening list at ``/api/conflict-names`` (owner or administrator).

spec: telephony.md "Screening list" and "Endpoints" — names pasted one per line with
an optional note; the answer counts added and skipped. The owner and administrators
read the names; a holder of ``telephony.manage`` naming another account
(``?account_id=``) sees only whether a list exists and its size; anyone else 404.

DELETE takes ``{"names": "<one per line>"}`` (removed by normal form, so any spelling
of a listed name removes it) or ``{"all": true}``; ``DELETE
/api/conflict-names/{id}`` removes one name.
"""

from __future__ import annotations

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.errors import Unprocessable
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import addressed_account, signed_in

REGISTRAR_PERMISSION = "telephony.manage"


class PastedNamesBody(Body):
    #: one name per line
    names: str
    #: applied to every name of this request
    note: str | None = None


class RemoveNamesBody(Body):
    names: str | None = None
    all: bool = False


async def get_names(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    account_id = await addressed_account(request, svc, identity,
                                         also_permission=REGISTRAR_PERMISSION)
    if account_id == identity.account_id or identity.is_admin:
        return json_response(200, await svc.diary.screening.view(account_id))
    return json_response(200, await svc.diary.screening.summary(account_id))


@accepts(PastedNamesBody)
async def add_names(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    account_id = await addressed_account(request, svc, identity)
    body = await read_body(request, PastedNamesBody, svc.max_body_bytes)
    return json_response(200, await svc.diary.screening.add(
        account_id, body.names, body.note, actor=identity.account_id))


@accepts(RemoveNamesBody)
async def remove_names(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    account_id = await addressed_account(request, svc, identity)
    body = await read_body(request, RemoveNamesBody, svc.max_body_bytes)
    if body.all == (body.names is not None):
        raise Unprocessable("Send either names (one per line) or all: true.", field="names")
    return json_response(200, await svc.diary.screening.remove(
        account_id, names=body.names, everything=body.all, actor=identity.account_id))


async def remove_name(request: Request, svc: Services, name_id: str) -> Response:
    identity = await signed_in(request, svc)
    account_id = await addressed_account(request, svc, identity)
    return json_response(200, await svc.diary.screening.remove(
        account_id, name_id=name_id, actor=identity.account_id))


def register(router: Router) -> None:
    router.add_get("/api/conflict-names", get_names)
    router.add_post("/api/conflict-names", add_names)
    router.add_delete("/api/conflict-names", remove_names)
    router.add_delete("/api/conflict-names/{name_id}", remove_name)
