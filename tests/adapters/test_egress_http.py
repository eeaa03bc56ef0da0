"""The gated session: a name is resolved once and judged by every address it gave;
hosts are judged as the client reads them, and every socket's address before it
connects, whatever notation the URL used; the allow list travels with the
request; redirects are not followed. The name lookup is replaced (no DNS here) by a
resolver answering like the system's, and the server is a real one on loopback."""

from __future__ import annotations

import socket

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver
from aiohttp.client_exceptions import InvalidURL

from adapters.egress_http import EgressRefused, allowing, gated_session, precheck
from adapters.notify_sender import NotificationSender, Result
from core.egress import EgressReason
from core.notifications import OutgoingRequest
from tests.support.listener import SilentListener, ipv6_loopback

pytestmark = pytest.mark.anyio


class HostsFile(AbstractResolver):
    """Names to addresses, as /etc/hosts would give them."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def resolve(self, host, port=0, family=socket.AF_INET):
        self.asked.append(host)
        if host not in self.table:
            raise OSError(f"{host} does not resolve")
        return [{"hostname": host, "host": address, "port": port, "family": socket.AF_INET,
                 "proto": 0, "flags": socket.AI_NUMERICHOST} for address in self.table[host]]

    async def close(self) -> None:
        pass


@pytest.fixture
async def server():
    seen: list[str] = []

    async def hook(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(text="ok")

    async def moved(request: web.Request) -> web.Response:
        seen.append(request.path)
        raise web.HTTPFound("http://127.0.0.1:1/elsewhere")

    app = web.Application()
    app.router.add_post("/hook", hook)
    app.router.add_post("/moved", moved)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1], seen
    finally:
        await runner.cleanup()


async def _post(session, url: str, allow: tuple[str, ...] = (), *, check: bool = True) -> int:
    if check:
        precheck(url, allow)
    with allowing(allow):
        async with session.post(url, data=b"{}", allow_redirects=False) as response:
            return response.status


async def test_a_name_resolving_to_this_machine_is_refused_unless_allowed(server):
    port, seen = server
    hosts = HostsFile({"hooks.example.test": ["127.0.0.1"], "mixed.example.test":
                       ["93.184.216.34", "127.0.0.1"]})
    session = gated_session(timeout_seconds=10, resolver=hosts)
    try:
        for name in ("hooks.example.test", "mixed.example.test"):
            with pytest.raises(EgressRefused) as refused:
                await _post(session, f"http://{name}:{port}/hook")
            assert refused.value.decision.reason is EgressReason.LOOPBACK
        assert seen == []
        assert await _post(session, f"http://hooks.example.test:{port}/hook",
                           ("hooks.example.test",)) == 200
        assert seen == ["/hook"]
        # the allow list is the request's own: the next request without it is refused
        with pytest.raises(EgressRefused):
            await _post(session, f"http://hooks.example.test:{port}/hook")
    finally:
        await session.close()
    assert hosts.asked.count("hooks.example.test") == 3  # resolved once per request


@pytest.mark.parametrize("url, reason", [
    ("http://127.0.0.1:{port}/hook", EgressReason.LOOPBACK),
    ("http://[::ffff:127.0.0.1]:{port}/hook", EgressReason.LOOPBACK),
    ("http://169.254.169.254/latest/meta-data", EgressReason.METADATA),
    ("http://localhost:{port}/hook", EgressReason.LOOPBACK),
    ("file:///etc/passwd", EgressReason.SCHEME),
])
async def test_literals_and_names_are_judged_before_connecting(server, url, reason):
    port, seen = server
    with pytest.raises(EgressRefused) as refused:
        precheck(url.format(port=port), ())
    assert refused.value.decision.reason is reason
    assert seen == []


async def test_the_sender_reports_the_gate_and_never_follows_a_redirect(server):
    port, seen = server
    sender = NotificationSender()
    request = OutgoingRequest(b"{}", (("Content-Type", "application/json"),))
    try:
        refused = await sender.post(f"http://127.0.0.1:{port}/hook", request, ())
        assert refused.result is Result.REFUSED and "loopback" in refused.detail
        moved = await sender.post(f"http://127.0.0.1:{port}/moved", request, ("127.0.0.1",))
        assert (moved.result, moved.status) == (Result.FAILED, 302)
        gone = await sender.post("http://127.0.0.1:1/hook", request, ("127.0.0.1",))
        assert gone.result is Result.FAILED and gone.status is None
        # words the target's owner understands; aiohttp's text stays in the log
        assert gone.detail == "could not be reached"
    finally:
        await sender.aclose()
    assert seen == ["/moved"]


async def test_a_refusal_does_not_tell_what_a_name_resolves_to(server):
    port, _ = server
    sender = NotificationSender(resolver=HostsFile({"intranet.example.test": ["10.20.30.40"]}))
    request = OutgoingRequest(b"{}", (("Content-Type", "application/json"),))
    try:
        refused = await sender.post(f"http://intranet.example.test:{port}/hook", request, ())
    finally:
        await sender.aclose()
    assert refused.result is Result.REFUSED
    assert refused.detail == "the egress gate refused intranet.example.test: private"


# -- hosts written so the client reads them as this machine -----------------------------

# Each reaches 127.0.0.1 (or ::1) once the client has read it: fullwidth digits and
# ideographic full stops (folded by IDNA), the numbers inet_aton accepts, an IPv6
# wrapper, a final dot, a user name before the host.
TRICKY_LOOPBACK = [
    "http://１２７.０.０.１:{port}/hook",
    "http://127。0。0。1:{port}/hook",
    "http://127．0．0．1:{port}/hook",
    "http://2130706433:{port}/hook",
    "http://0177.0.0.1:{port}/hook",
    "http://0x7f.1:{port}/hook",
    "http://127.1:{port}/hook",
    "http://[::ffff:127.0.0.1]:{port}/hook",
    "http://127.0.0.1.:{port}/hook",
    "http://localhost.:{port}/hook",
    "http://ＬＯＣＡＬＨＯＳＴ:{port}/hook",
    "http://a@127.0.0.1:{port}/hook",
    "http://127.0.0.1:80@127.0.0.1:{port}/hook",
]


@pytest.mark.parametrize("url", TRICKY_LOOPBACK)
async def test_a_host_is_judged_as_the_client_reads_it(url):
    with SilentListener() as listener:
        target = url.format(port=listener.port)
        with pytest.raises(EgressRefused) as refused:
            precheck(target, ())
        assert refused.value.decision.reason is EgressReason.LOOPBACK
        sender = NotificationSender()
        try:
            result = await sender.post(target, OutgoingRequest(b"{}", ()), ())
        finally:
            await sender.aclose()
        assert result.result is Result.REFUSED and "loopback" in result.detail
        assert listener.connections() == 0


@pytest.mark.parametrize("url", TRICKY_LOOPBACK)
async def test_the_socket_is_judged_even_when_the_url_was_not(url):
    # A request made without ``precheck``: the gate still refuses the address the
    # socket would connect to, before connecting.
    with SilentListener() as listener:
        session = gated_session(timeout_seconds=10)
        try:
            with pytest.raises((EgressRefused, InvalidURL)):
                await _post(session, url.format(port=listener.port).replace("hook", "x"),
                            check=False)
        finally:
            await session.close()
        assert listener.connections() == 0


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
@pytest.mark.parametrize("url", ["http://[::1]:{port}/hook", "http://[0:0:0:0:0:0:0:1]:{port}/x"])
async def test_the_ipv6_loopback_is_refused_before_connecting(url):
    with SilentListener("::1") as listener:
        session = gated_session(timeout_seconds=10)
        try:
            with pytest.raises(EgressRefused):
                await _post(session, url.format(port=listener.port), check=False)
        finally:
            await session.close()
        assert listener.connections() == 0


async def test_an_allowed_literal_still_connects_through_the_socket_check(server):
    port, seen = server
    session = gated_session(timeout_seconds=10)
    try:
        assert await _post(session, f"http://１２７.０.０.１:{port}/hook", ("127.0.0.1",)) == 200
    finally:
        await session.close()
    assert seen == ["/hook"]
