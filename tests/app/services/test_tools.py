"""Tools: /api/admin/tools CRUD and its checks, the secret that never comes back, and
HTTP tools called through the pipeline against a loopback tool server."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from aiohttp import web

from app import db
from app.bundle import Services
from app.config import BootConfig
from app.errors import Conflict
from app.piccolo_migrations.svc_2026_11_25t10_00_00_000000 import STATEMENTS
from app.tables import Agent, AuditEntry, HttpToolOffer
from core.pipeline import ToolFinished, ToolStatus
from tests.app.services.test_pipeline import add_agent, only, turn
from tests.app.services.test_pipeline import owner  # noqa: F401  (fixture: an account id)
from tests.fakes.upstream import Behaviour, ToolCall
from tests.support.aiohttp_site import serving
from tests.support.listener import SilentListener
from tests.support.settings import allow_loopback

pytestmark = pytest.mark.anyio

SECRET = "tool-secret-value-4242"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def tool_body(**changes: Any) -> dict[str, Any]:
    return {"name": "weather", "description": "Weather for a city.", "parameters": SCHEMA,
            "url": "http://127.0.0.1:9/weather", **changes}


async def test_admin_creates_lists_changes_and_deletes_a_tool(api, admin):
    created = await api.post("/api/admin/tools", headers=admin, json=tool_body(
        secret_header_name="X-Api-Key", secret_header_value=SECRET))
    assert created.status_code == 201, created.text
    tool = created.json()
    assert tool["secret_header_set"] is True and tool["secret_header_name"] == "X-Api-Key"
    assert (tool["method"], tool["side_effecting"], tool["usable_on_call"]) == ("POST", True, False)
    listed = (await api.get("/api/admin/tools", headers=admin)).json()
    assert [t["name"] for t in listed["data"]] == ["weather"]
    assert "current_time" in [t["name"] for t in listed["builtin"]]
    url = f"/api/admin/tools/{tool['id']}"
    changed = await api.patch(url, headers=admin, json={"usable_on_call": True, "method": "GET"})
    assert changed.json()["usable_on_call"] is True and changed.json()["method"] == "GET"
    assert changed.json()["secret_header_set"] is True  # untouched by other changes
    cleared = await api.patch(url, headers=admin, json={"secret_header_value": None})
    assert cleared.json()["secret_header_set"] is False
    assert cleared.json()["secret_header_name"] is None
    assert (await api.delete(url, headers=admin)).status_code == 204
    assert (await api.get(url, headers=admin)).status_code == 404
    entries = await AuditEntry.select().where(AuditEntry.kind == "http_tool.deleted").output(
        load_json=True)
    assert [(e["subject"], e["data"]) for e in entries] == [(tool["id"], {"name": "weather"})]


async def test_the_secret_value_is_never_returned(api, admin):
    created = await api.post("/api/admin/tools", headers=admin, json=tool_body(
        secret_header_name="X-Api-Key", secret_header_value=SECRET))
    url = f"/api/admin/tools/{created.json()['id']}"
    answers = [created, await api.get(url, headers=admin),
               await api.get("/api/admin/tools", headers=admin),
               await api.patch(url, headers=admin, json={"description": "Changed."})]
    for answer in answers:
        assert SECRET not in answer.text
    audit = await api.get("/api/admin/audit", headers=admin)
    assert SECRET not in audit.text


@pytest.mark.parametrize("changes, field", [
    ({"name": "has space"}, "name"),
    ({"name": ""}, "name"),
    ({"description": " "}, "description"),
    ({"parameters": {"type": "array"}}, "parameters"),
    ({"parameters": {"type": "object", "properties": {"a": {"type": "text"}}}}, "parameters"),
    ({"parameters": {"type": "object", "required": ["a"]}}, "parameters"),
    ({"parameters": "not an object"}, "parameters"),
    ({"url": "ftp://example.org"}, "url"),
    ({"method": "BREW"}, "method"),
    ({"secret_header_name": "Bad Header"}, "secret_header_name"),
    ({"secret_header_name": "Content-Type", "secret_header_value": "x"}, "secret_header_name"),
    ({"secret_header_value": "x"}, "secret_header_name"),
    ({"side_effecting": "yes"}, "side_effecting"),
    ({"colour": "blue"}, "colour"),
])
async def test_bad_tools_are_refused_naming_the_field(api, admin, changes, field):
    response = await api.post("/api/admin/tools", headers=admin, json=tool_body(**changes))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    assert (await api.get("/api/admin/tools", headers=admin)).json()["data"] == []


async def test_names_are_unique_and_built_in_names_are_taken(api, admin):
    assert (await api.post("/api/admin/tools", headers=admin, json=tool_body())).status_code == 201
    again = await api.post("/api/admin/tools", headers=admin, json=tool_body())
    assert again.status_code == 409 and again.json()["error"]["code"] == "name_taken"
    builtin = await api.post("/api/admin/tools", headers=admin,
                             json=tool_body(name="current_time"))
    assert builtin.status_code == 409


async def test_ordinary_accounts_cannot_manage_tools(api, services):
    user = await api.as_new_user(services, "ann@example.org")
    assert (await api.get("/api/admin/tools", headers=user)).status_code == 403
    assert (await api.post("/api/admin/tools", headers=user, json=tool_body())).status_code == 403


async def test_a_secret_without_an_encryption_key_is_409(database, boot):
    keyless = Services.build(BootConfig({**boot.values, "message_encryption_key": None}))
    with pytest.raises(Conflict) as refused:
        await keyless.http_tools.create(actor=uuid.uuid4(), fields=tool_body(
            secret_header_name="X-Api-Key", secret_header_value=SECRET))
    assert refused.value.code == "encryption_key_missing"
    plain = await keyless.http_tools.create(actor=uuid.uuid4(), fields=tool_body())
    assert plain["secret_header_enc"] is None
    await keyless.aclose()


# -- calling HTTP tools -----------------------------------------------------------------------


class ToolServer:
    """A loopback HTTP tool: /weather answers JSON, the others misbehave."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        app = web.Application()
        app.router.add_route("*", "/weather", self.weather)
        app.router.add_post("/broken", self.broken)
        app.router.add_post("/garbage", self.garbage)
        app.router.add_post("/huge", self.huge)
        self._serving = serving(app, access_log=None)

    async def weather(self, request: web.Request) -> web.Response:
        body = await request.json() if request.method == "POST" else dict(request.query)
        self.seen.append({"method": request.method, "body": body,
                          "key": request.headers.get("X-Api-Key")})
        return web.json_response({"text": f"Sunny in {body.get('city')}."})

    async def broken(self, request: web.Request) -> web.Response:
        return web.Response(status=500, text="down")

    async def garbage(self, request: web.Request) -> web.Response:
        return web.Response(body=b"{not json", content_type="application/json")

    async def huge(self, request: web.Request) -> web.Response:
        return web.Response(text="x" * 400_000)

    async def __aenter__(self) -> str:
        return f"http://127.0.0.1:{await self._serving.__aenter__()}"

    async def __aexit__(self, *exc: object) -> None:
        await self._serving.__aexit__(*exc)


@pytest.fixture
async def tool_server(services):
    await allow_loopback(services)
    server = ToolServer()
    async with server as base:
        yield server, base


async def _ask_with_tool(services, fake, owner, name: str, arguments: str) -> ToolFinished:
    fake.script = [Behaviour(tool_call=ToolCall(name, arguments)), Behaviour(text="Done.")]
    agent = await add_agent(owner, tools=[name])
    events = await turn(services, owner, agent, "Weather in Oslo?")
    assert events[-1].text == "Done."
    return only(events, ToolFinished)


@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_an_http_tool_receives_the_arguments_and_its_secret(services, fake, owner,
                                                                  tool_server, method):
    server, base = tool_server
    await services.http_tools.create(actor=uuid.uuid4(), fields=tool_body(
        url=f"{base}/weather", method=method, secret_header_name="X-Api-Key",
        secret_header_value=SECRET))
    finished = await _ask_with_tool(services, fake, owner, "weather", '{"city": "Oslo"}')
    assert finished.status is ToolStatus.OK
    assert json.loads(finished.content) == {"text": "Sunny in Oslo."}
    assert server.seen == [{"method": method, "body": {"city": "Oslo"}, "key": SECRET}]


@pytest.mark.parametrize("path, reason", [
    ("/broken", "HTTP 500"), ("/garbage", "claims to be JSON"), ("/huge", "larger than"),
    ("/missing", "HTTP 404")])
async def test_an_http_tool_that_fails_is_reported_to_the_model(services, fake, owner,
                                                                tool_server, path, reason):
    _, base = tool_server
    await services.http_tools.create(actor=uuid.uuid4(), fields=tool_body(url=f"{base}{path}"))
    finished = await _ask_with_tool(services, fake, owner, "weather", '{"city": "Oslo"}')
    assert finished.status is ToolStatus.ERROR and reason in finished.content
    assert base not in finished.content  # the address stays out of the model's view


async def test_an_unreachable_http_tool_and_missing_arguments_are_reported(services, fake,
                                                                            owner):
    await allow_loopback(services)
    await services.http_tools.create(actor=uuid.uuid4(), fields=tool_body(
        url="http://127.0.0.1:9/weather"))
    unreachable = await _ask_with_tool(services, fake, owner, "weather", '{"city": "Oslo"}')
    assert unreachable.status is ToolStatus.ERROR and "could not be reached" in unreachable.content
    assert "Error" not in unreachable.content  # words, not the client library's class names
    fake.requests.clear()
    missing = await _ask_with_tool(services, fake, owner, "weather", "{}")
    assert missing.status is ToolStatus.ERROR and "needs the argument(s) city" in missing.content


async def test_an_http_tool_passes_the_egress_gate(services, fake, owner):
    """A tool on this machine is refused until an administrator allows its host, and
    nothing is sent to it (spec: telephony.md "Outward notifications" — the same gate)."""
    server = ToolServer()
    async with server as base:
        await services.http_tools.create(actor=uuid.uuid4(), fields=tool_body(
            url=f"{base}/weather"))
        refused = await _ask_with_tool(services, fake, owner, "weather", '{"city": "Oslo"}')
        assert refused.status is ToolStatus.ERROR and "not allowed" in refused.content
        assert "loopback" in refused.content and server.seen == []
        await allow_loopback(services)
        fake.requests.clear()
        allowed = await _ask_with_tool(services, fake, owner, "weather", '{"city": "Oslo"}')
        assert allowed.status is ToolStatus.OK and len(server.seen) == 1


@pytest.mark.parametrize("host", ["１２７.０.０.１", "127。0。0。1", "[::ffff:127.0.0.1]"])
async def test_an_http_tool_on_this_machine_is_refused_however_its_host_is_written(
        services, fake, owner, host):
    with SilentListener() as listener:
        await services.http_tools.create(actor=uuid.uuid4(), fields=tool_body(
            url=f"http://{host}:{listener.port}/weather"))
        refused = await _ask_with_tool(services, fake, owner, "weather", '{"city": "Oslo"}')
        assert refused.status is ToolStatus.ERROR and "not allowed" in refused.content
        assert "loopback" in refused.content
        assert listener.connections() == 0

# -- offers: who may attach an HTTP tool

async def _weather(api, admin) -> dict[str, Any]:
    created = await api.post("/api/admin/tools", headers=admin, json=tool_body(
        secret_header_name="X-Api-Key", secret_header_value=SECRET))
    assert created.status_code == 201, created.text
    return created.json()


async def _attach(api, headers, *tools: str):
    """A new agent with ``tools``, numbered: an owner's agents have names apart."""
    name = f"Desk {len((await api.get('/api/agents', headers=headers)).json()['data']) + 1}"
    return await api.post("/api/agents", headers=headers,
                          json={"name": name, "model": "local", "tools": list(tools)})


async def test_a_user_attaches_only_the_tools_offered_to_them(api, services, admin):
    tool = await _weather(api, admin)
    ann = await api.as_new_user(services, "ann@example.org")
    listed = (await api.get("/api/tools", headers=ann)).json()
    assert listed["data"] == [] and "current_time" in [t["name"] for t in listed["builtin"]]
    refused = await _attach(api, ann, "weather")
    unknown = await _attach(api, ann, "not_a_tool_yet")
    assert refused.status_code == unknown.status_code == 422
    assert refused.json()["error"]["code"] == unknown.json()["error"]["code"] == "unknown_tool"
    assert (await _attach(api, ann, "current_time")).status_code == 201

    me = (await api.get("/api/me", headers=ann)).json()["id"]
    offer = await api.post(f"/api/admin/tools/{tool['id']}/offers", headers=admin,
                           json={"account_id": me})
    assert offer.status_code == 201 and offer.json()["account_id"] == me
    listed = (await api.get("/api/tools", headers=ann)).json()["data"]
    assert [t["name"] for t in listed] == ["weather"]
    assert "url" not in listed[0] and SECRET not in json.dumps(listed)
    agent = await _attach(api, ann, "weather")
    assert agent.status_code == 201 and agent.json()["tools"] == ["weather"]

    withdrawn = await api.delete(f"/api/admin/tools/{tool['id']}/offers/{offer.json()['id']}",
                                 headers=admin)
    assert withdrawn.status_code == 204
    assert (await _attach(api, ann, "weather")).status_code == 422
    # An agent keeps what it already has (the recorded choice); it cannot gain more.
    kept = await api.patch(f"/api/agents/{agent.json()['id']}", headers=ann,
                           json={"tools": ["weather", "current_time"]})
    assert kept.status_code == 200 and kept.json()["tools"] == ["current_time", "weather"]


async def test_a_tool_offered_to_a_project_or_to_everyone(api, services, admin):
    tool = await _weather(api, admin)
    ann = await api.as_new_user(services, "ann@example.org")
    bob = await api.as_new_user(services, "bob@example.org")
    project = (await api.post("/api/projects", headers=ann, json={"name": "Clinic"})).json()
    offers = f"/api/admin/tools/{tool['id']}/offers"
    await api.post(offers, headers=admin, json={"project_id": project["id"]})
    assert (await _attach(api, ann, "weather")).status_code == 201  # the project's owner
    assert (await _attach(api, bob, "weather")).status_code == 422
    everyone = await api.post(offers, headers=admin, json={"everyone": True})
    assert everyone.status_code == 201 and everyone.json()["everyone"] is True
    assert (await _attach(api, bob, "weather")).status_code == 201
    listed = (await api.get(offers, headers=admin)).json()["data"]
    assert [(o["project_id"], o["everyone"]) for o in listed] == [
        (project["id"], False), (None, True)]


async def test_offers_are_checked_and_for_administrators_only(api, services, admin):
    tool = await _weather(api, admin)
    ann = await api.as_new_user(services, "ann@example.org")
    me = (await api.get("/api/me", headers=ann)).json()["id"]
    offers = f"/api/admin/tools/{tool['id']}/offers"
    assert (await api.post(offers, headers=ann, json={"account_id": me})).status_code == 403
    assert (await api.get(offers, headers=ann)).status_code == 403
    for body in ({}, {"account_id": me, "everyone": True}):
        answer = await api.post(offers, headers=admin, json=body)
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "one_audience"
    for body in ({"account_id": str(uuid.uuid4())}, {"project_id": "x"}):
        assert (await api.post(offers, headers=admin, json=body)).status_code == 422
    assert (await api.post(offers, headers=admin, json={"account_id": me})).status_code == 201
    again = await api.post(offers, headers=admin, json={"account_id": me})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_offered"
    assert (await api.post(f"/api/admin/tools/{uuid.uuid4()}/offers", headers=admin,
                           json={"everyone": True})).status_code == 404
    assert (await api.delete(f"{offers}/{uuid.uuid4()}", headers=admin)).status_code == 404
    assert [e["kind"] for e in (await api.get("/api/admin/audit?kind=http_tool.offered",
                                              headers=admin)).json()["data"]] == [
        "http_tool.offered"]


async def test_the_upgrade_offers_each_attached_tool_to_its_agents_owner(api, services, admin):
    """What the migration does for agents that named HTTP tools before offers existed."""
    tool = await _weather(api, admin)
    ann = await api.as_new_user(services, "ann@example.org")
    me = uuid.UUID((await api.get("/api/me", headers=ann)).json()["id"])
    await Agent(name="Old", model="local", owner_id=me, tools=["weather", "gone"]).save()
    async with db.connection() as connection:
        await connection.execute(STATEMENTS[-1])
        await connection.execute(STATEMENTS[-1])  # twice: nothing doubles
    rows = await HttpToolOffer.select(HttpToolOffer.tool_id, HttpToolOffer.account_id)
    assert rows == [{"tool_id": uuid.UUID(tool["id"]), "account_id": me}]
