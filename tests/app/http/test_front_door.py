"""The front door: forwarded client and scheme from trusted proxies, and the host a
session cookie may be brought to (``app.http.front_door``, ``core.host_names``)."""

from __future__ import annotations

import json

import pytest

from app.config import BootConfig
from app.http.front_door import FrontDoor
from core.forwarded import parse_trusted_proxies
from core.host_names import OwnHosts

pytestmark = pytest.mark.anyio


class Inner:
    def __init__(self) -> None:
        self.scopes = []

    async def __call__(self, scope, receive, send) -> None:
        self.scopes.append(scope)


async def through(door: FrontDoor, *, kind="http", peer="10.0.0.2", path="/api/me",
                  headers=()) -> tuple[list, list]:
    sent = []

    async def send(message) -> None:
        sent.append(message)

    scope = {"type": kind, "scheme": "ws" if kind == "websocket" else "http", "path": path,
             "client": (peer, 5555),
             "headers": [(n.encode(), v.encode()) for n, v in headers]}
    await door(scope, None, send)
    return door.inner.scopes, sent


def door(trusted="10.0.0.0/24", public="https://svc.example.org", bind="127.0.0.1"):
    return FrontDoor(Inner(), parse_trusted_proxies(trusted), OwnHosts.of(public, bind),
                     "svc_session")


async def test_a_trusted_proxy_gives_the_client_and_the_scheme():
    scopes, _ = await through(door(), headers=[("X-Forwarded-For", "203.0.113.9"),
                                               ("X-Forwarded-Proto", "https")])
    assert scopes[0]["client"] == ("203.0.113.9", 0) and scopes[0]["scheme"] == "https"
    scopes, _ = await through(door(), kind="websocket",
                              headers=[("Forwarded", "for=203.0.113.9;proto=https")])
    assert scopes[0]["client"] == ("203.0.113.9", 0) and scopes[0]["scheme"] == "wss"


async def test_anyone_else_keeps_its_own_address():
    scopes, _ = await through(door(), peer="198.51.100.1",
                              headers=[("X-Forwarded-For", "203.0.113.9"),
                                       ("X-Forwarded-Proto", "https")])
    assert scopes[0]["client"] == ("198.51.100.1", 5555) and scopes[0]["scheme"] == "http"


@pytest.mark.parametrize("host", ["svc.example.org", "SVC.example.org:443", "127.0.0.1:8080",
                                  "localhost:8080"])
async def test_a_session_cookie_is_taken_on_our_own_hosts(host):
    scopes, _ = await through(door(), headers=[("Host", host), ("Cookie", "svc_session=x")])
    assert len(scopes) == 1


@pytest.mark.parametrize("path,headers", [
    ("/api/me", [("Host", "rebound.example.net"), ("Cookie", "a=1; svc_session=x")]),
    ("/api/auth/login", [("Host", "rebound.example.net")]),
    ("/login", [("Host", "10.0.0.9:8080")]),
    ("/login", []),
])
async def test_a_session_cookie_on_another_host_is_refused(path, headers):
    scopes, sent = await through(door(), path=path, headers=headers)
    assert scopes == [] and sent[0]["status"] == 421
    assert json.loads(sent[1]["body"])["error"]["code"] == "unknown_host"


async def test_requests_without_the_cookie_may_name_any_host():
    scopes, _ = await through(door(), path="/v1/models", headers=[("Host", "api.internal")])
    assert len(scopes) == 1


async def test_a_websocket_with_the_cookie_on_another_host_is_closed():
    scopes, sent = await through(door(), kind="websocket", headers=[
        ("Host", "rebound.example.net"), ("Cookie", "svc_session=x")])
    assert scopes == [] and sent == [{"type": "websocket.close", "code": 1008}]


def test_bound_to_every_interface_any_address_literal_is_ours():
    hosts = OwnHosts.of("https://svc.example.org", "0.0.0.0")
    assert "10.0.0.5:8080" in hosts and "[fd00::5]:8080" in hosts
    assert "localhost" not in hosts and "rebound.example.net" not in hosts
    assert "localhost" not in OwnHosts.of("https://svc.example.org", "10.0.0.5")


async def test_the_application_refuses_sign_in_on_a_foreign_host(database, encryption_key):
    from app.bundle import Services
    from tests.support.http import running_app

    services = Services.build(BootConfig({"message_encryption_key": encryption_key}))
    try:
        async with running_app(services) as client:
            body = {"email": "nobody@example.org", "password": "not the password"}
            refused = await client.post("/api/auth/login", json=body,
                                        headers={"Host": "rebound.example.net"})
            assert refused.status_code == 421
            assert refused.json()["error"]["code"] == "unknown_host"
            ours = await client.post("/api/auth/login", json=body)
            assert ours.status_code == 401
    finally:
        await services.aclose()
