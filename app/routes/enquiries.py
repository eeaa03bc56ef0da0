"""Enquiries (messages taken on calls): the owner's list and handling, and the list
for ``telephony.manage``.

spec: telephony.md "Endpoints" — ``/api/enquiries`` and ``/api/enquiries/{id}`` (GET,
PATCH; owner or administrator: the caller's own, or for an administrator
``?account_id=`` on the list and any enquiry by id; anyone else 404), and
``/api/admin/telephony/enquiries`` (telephony.manage; every account's, or
``?account_id=``). Lists take ``?status=`` and ``?limit=`` (default 100, at most 500).
"""

from __future__ import annotations

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.diary.enquiries import DEFAULT_LIMIT, MAX_LIMIT
from app.errors import Unprocessable
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import addressed_account, query_value, signed_in, with_permission
from app.http.query_values import whole_number


class EnquiryChangeBody(Body):
    status: str | None = None
    #: null clears the note
    note: str | None = None


def _limit(request: Request) -> int:
    return whole_number(query_value(request, "limit"), "limit", default=DEFAULT_LIMIT,
                        most=MAX_LIMIT)


async def list_enquiries(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    account_id = await addressed_account(request, svc, identity)
    return json_response(200, {"data": await svc.diary.enquiries.list(
        account_id, status=query_value(request, "status"), limit=_limit(request))})


async def get_enquiry(request: Request, svc: Services, enquiry_id: str) -> Response:
    identity = await signed_in(request, svc)
    owner = None if identity.is_admin else identity.account_id
    return json_response(200, await svc.diary.enquiries.get(owner, enquiry_id))


@accepts(EnquiryChangeBody)
async def change_enquiry(request: Request, svc: Services, enquiry_id: str) -> Response:
    identity = await signed_in(request, svc)
    owner = None if identity.is_admin else identity.account_id
    body = await read_body(request, EnquiryChangeBody, svc.max_body_bytes)
    changes = {name: getattr(body, name) for name in body.model_fields_set}
    if changes.get("status", "") is None:
        raise Unprocessable("status cannot be null.", field="status")
    return json_response(200, await svc.diary.enquiries.change(owner, enquiry_id, changes))


async def list_all_enquiries(request: Request, svc: Services) -> Response:
    await with_permission(request, svc, "telephony.manage")
    named = query_value(request, "account_id")
    account_id = None
    if named is not None:
        account_id = (await svc.accounts.find(named))["id"]
    return json_response(200, {"data": await svc.diary.enquiries.list(
        account_id, status=query_value(request, "status"), limit=_limit(request))})


def register(router: Router) -> None:
    router.add_get("/api/enquiries", list_enquiries)
    router.add_get("/api/enquiries/{enquiry_id}", get_enquiry)
    router.add_patch("/api/enquiries/{enquiry_id}", change_enquiry)
    router.add_get("/api/admin/telephony/enquiries", list_all_enquiries)
