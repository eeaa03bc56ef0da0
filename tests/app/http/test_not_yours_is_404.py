"""Every owner-or-administrator endpoint answers 404 to another ordinary account, and
changes nothing (DESIGN: "Owner-or-administrator resources answer 404 to anyone
else"; spec: telephony.md "Endpoints").

One account owns one of everything; a second ordinary account asks for each by id,
and names the first account with ``?account_id=`` on the endpoints that act on "my"
data. The table is checked against the OpenAPI document, so an endpoint added later
without a row here fails the test until it has one.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest

from tests.app.diary.calls import a_call
from tests.support.diary import LONDON_DIARY, NOW

pytestmark = pytest.mark.anyio

# path -> {method: body} for the second account; {names} are the owner's ids.
BY_ID: dict[str, dict[str, Any]] = {
    "/api/agents/{agent}": {"GET": None, "PATCH": {"name": "Mine now"}},
    "/api/agents/{agent}/archive": {"POST": None},
    "/api/projects/{project}": {"GET": None, "PATCH": {"name": "Mine now"}, "DELETE": None},
    "/api/projects/{project}/members": {"POST": {"email": "bob@example.org"}},
    "/api/projects/{project}/members/{owner}": {"DELETE": None},
    "/api/projects/{project}/invitations/{invitation}": {"DELETE": None},
    "/api/me/invitations/{invitation}/accept": {"POST": None},
    "/api/me/invitations/{invitation}": {"DELETE": None},
    "/api/libraries/{library}": {"GET": None, "PATCH": {"name": "Mine now"}, "DELETE": None},
    "/api/libraries/{library}/documents": {
        "GET": None, "POST": {"title": "T", "content": "Mine."}},
    "/api/libraries/{library}/search?q=text": {"GET": None},
    "/api/libraries/{library}/documents/{document}": {"GET": None, "DELETE": None},
    "/api/chats/{chat}": {"GET": None, "DELETE": None, "PATCH": {"title": "Mine now"}},
    "/api/chats/{chat}/messages": {"POST": {"content": "Hello"}},
    "/api/profile/api-keys/{api_key}": {"DELETE": None},
    "/api/profile/provider-keys/{provider_key}": {"DELETE": None},
    "/api/conflict-names/{name}": {"DELETE": None},
    "/api/diary/appointments/{appointment}": {
        "GET": None, "PATCH": {"starts_at": "2027-03-04T10:00:00Z"}, "DELETE": None},
    "/api/enquiries/{enquiry}": {"GET": None, "PATCH": {"status": "done"}},
    "/api/notify-targets/{target}": {"GET": None, "PATCH": {"enabled": False}, "DELETE": None},
    "/api/notify-targets/{target}/test": {"POST": None},
    "/api/notify-targets/{target}/attempts": {"GET": None},
    "/api/telephony/calls/{call}/recording": {"GET": None, "DELETE": None},
    "/api/telephony/calls/{call}/transcript": {"DELETE": None},
    "/api/lines/{line}/conversation": {"POST": {"text": "Hello"}},
}
# The endpoints that act on the caller's own data, naming the owner instead.
NAMING_THE_OWNER: dict[str, dict[str, Any]] = {
    "/api/diary": {"GET": None, "PUT": {"enabled": False}},
    "/api/diary/closures": {"POST": {"closed_on": "2027-03-10"}},
    "/api/diary/closures?closed_on=2027-03-09": {"DELETE": None},
    "/api/diary/slots": {"GET": None},
    "/api/diary/appointments": {"GET": None, "POST": {
        "starts_at": "2027-03-03T10:00:00Z", "caller_name": "Bob", "subject": "Mine"}},
    "/api/enquiries": {"GET": None},
    "/api/conflict-names": {
        "GET": None, "POST": {"names": "Bob Mallory"}, "DELETE": {"all": True}},
    "/api/notify-targets": {"GET": None, "POST": {
        "kind": "chat_a", "url": "https://hooks.example.com/b", "account_id": "{owner}"}},
}
# Paths with an id that are not the owner's to begin with: the administrators' own,
# the service's public API and the telephone system's questions.
NOT_OWNED_PREFIXES = ("/api/admin/", "/v1/", "/api/telephony/carrier/", "/api/telephony/pbx/")


def _requests(table: dict[str, dict[str, Any]]) -> list[tuple[str, str, Any]]:
    """The table's rows as (method, path, body), in the order written."""
    return [(method, path, body) for path, methods in table.items()
            for method, body in methods.items()]


async def _id(response) -> str:
    assert response.status_code in (200, 201), response.text
    body = response.json()
    assert "id" in body, (response.request.url.path, body)
    return body["id"]


@pytest.fixture
async def owned(api, services):
    """The owner's headers and one of each thing they own, by name."""
    services.diary.clock.now = lambda: NOW
    root = await api.as_new_user(services, "root@example.org", role="admin")
    ann = await api.as_new_user(services, "ann@example.org")
    ids = {"owner": (await api.get("/api/me", headers=ann)).json()["id"]}
    ids["agent"] = await _id(await api.post("/api/agents", headers=ann,
                                            json={"name": "Reception", "model": "local"}))
    ids["project"] = await _id(await api.post("/api/projects", headers=ann, json={"name": "P"}))
    await api.post(f"/api/projects/{ids['project']}/members", headers=ann,
                   json={"email": "carol@example.org"})
    carol = await api.as_new_user(services, "carol@example.org")
    ids["invitation"] = (await api.get("/api/me/invitations", headers=carol)).json()[
        "data"][0]["id"]
    ids["library"] = await _id(await api.post("/api/libraries", headers=ann, json={"name": "L"}))
    ids["document"] = await _id(await api.post(
        f"/api/libraries/{ids['library']}/documents", headers=ann,
        json={"title": "Notes", "content": "Some text to find."}))
    ids["chat"] = await _id(await api.post("/api/chats", headers=ann,
                                           json={"agent_id": ids["agent"]}))
    ids["api_key"] = await _id(await api.post("/api/profile/api-keys", headers=ann,
                                              json={"name": "laptop"}))
    provider = await _id(await api.post("/api/admin/providers", headers=root, json={
        "name": "p", "base_url": "https://models.example.org/v1", "models": ["m"]}))
    stored = await api.post("/api/profile/provider-keys", headers=ann,
                            json={"provider_id": provider, "api_key": "sk-ann"})
    ids["provider_key"] = stored.json()["data"][0]["id"]
    assert (await api.post("/api/conflict-names", headers=ann,
                           json={"names": "Jane Smith"})).status_code in (200, 201)
    ids["name"] = (await api.get("/api/conflict-names", headers=ann)).json()["names"][0]["id"]
    assert (await api.put("/api/diary", headers=ann, json=LONDON_DIARY)).status_code == 200
    assert (await api.post("/api/diary/closures", headers=ann,
                           json={"closed_on": "2027-03-09"})).status_code in (200, 201)
    starts = (NOW + dt.timedelta(days=1)).replace(hour=10).isoformat()
    ids["appointment"] = await _id(await api.post("/api/diary/appointments", headers=ann, json={
        "starts_at": starts, "caller_name": "Jane Smith", "subject": "Lease"}))
    call = await a_call(uuid.UUID(ids["owner"]))
    enquiry = await services.diary.enquiries.take(call, caller_name="Jane", subject="Boiler",
                                                  message="Leaking.")
    ids["enquiry"] = str(enquiry["id"])
    ids["call"] = str(call.call_id)
    ids["line"] = await _id(await api.post("/api/admin/telephony/numbers", headers=root, json={
        "e164": "+441632960055", "agent_id": ids["agent"], "owner_user_id": ids["owner"]}))
    ids["target"] = await _id(await api.post("/api/notify-targets", headers=ann, json={
        "kind": "chat_a", "url": "https://hooks.example.com/services/T000/B000/XXXX"}))
    return ann, ids


async def _snapshot(api, ann, ids) -> list[str]:
    """What the owner sees of everything they own."""
    paths = ["/api/agents/{agent}", "/api/projects/{project}", "/api/libraries/{library}",
             "/api/libraries/{library}/documents/{document}", "/api/chats/{chat}",
             "/api/profile/api-keys", "/api/profile/provider-keys", "/api/conflict-names",
             "/api/diary", "/api/diary/appointments/{appointment}", "/api/enquiries/{enquiry}",
             "/api/notify-targets/{target}"]
    seen = []
    for path in paths:
        response = await api.get(path.format(**ids), headers=ann)
        assert response.status_code == 200, (path, response.text)
        seen.append(response.text)
    return seen


async def test_every_owner_endpoint_answers_404_to_another_account(api, services, owned):
    ann, ids = owned
    bob = await api.as_new_user(services, "bob@example.org")
    before = await _snapshot(api, ann, ids)
    for method, path, body in _requests(BY_ID):
        response = await api.request(method, path.format(**ids), headers=bob, json=body)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["error"]["code"] == "not_found", (method, path)
    for method, path, body in _requests(NAMING_THE_OWNER):
        joiner = "&" if "?" in path else "?"
        if isinstance(body, dict):  # some name the account in the body instead
            body = {k: ids["owner"] if v == "{owner}" else v for k, v in body.items()}
        response = await api.request(method, f"{path}{joiner}account_id={ids['owner']}",
                                     headers=bob, json=body)
        assert response.status_code == 404, (method, path, response.text)
    assert await _snapshot(api, ann, ids) == before


async def test_the_table_covers_every_owner_endpoint_the_service_has(api):
    document = (await api.get("/openapi.json")).json()
    documented = {(method.upper(), path) for path, operations in document["paths"].items()
                  for method in operations if not path.startswith(NOT_OWNED_PREFIXES)}
    by_id = {(method, path) for method, path, _ in _requests(BY_ID)}
    table = {(m, _template(p)) for m, p in by_id}
    owned_ids = {(m, p) for m, p in documented if "{" in p}
    assert owned_ids - table == set(), "endpoints with an id and no row in BY_ID"


def _template(path: str) -> str:
    """``/api/agents/{agent}?q=x`` as the document writes it: ``/api/agents/{agent_id}``."""
    names = {"agent": "agent_id", "project": "project_id", "library": "library_id",
             "document": "document_id", "chat": "chat_id", "api_key": "key_id",
             "provider_key": "key_id", "name": "name_id", "appointment": "appointment_id",
             "enquiry": "enquiry_id", "owner": "account_id", "target": "target_id",
             "call": "call_id", "line": "line_id", "invitation": "invitation_id"}
    path = path.split("?")[0]
    for short, long in names.items():
        path = path.replace("{" + short + "}", "{" + long + "}")
    return path
