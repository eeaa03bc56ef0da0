"""Asking ``/healthz`` through the network (``adapters.health_probe``), against
loopback servers started here: what answered, or why nothing did, in plain words."""

from __future__ import annotations

import ssl

import anyio
import pytest
from aiohttp import web

from adapters.health_probe import probe_health
from tests.support.listener import free_port
from tests.support.tls import self_signed

pytestmark = pytest.mark.anyio


@pytest.fixture
async def server(tmp_path):
    """Start an aiohttp app on loopback, over TLS when asked; yields a starter."""
    runners = []
    released = anyio.Event()  # a slow server answers only once the test is over

    async def start(status: int = 200, *, tls: bool = False, slow: bool = False,
                    page: str | None = None) -> str:
        """``page``: answer this HTML as someone else's server would, not svc's JSON."""
        async def healthz(request: web.Request) -> web.Response:
            if slow:
                await released.wait()
            if page is not None:
                return web.Response(text=page, content_type="text/html", status=status,
                                    headers={"Server": "parking/1.0"})
            return web.json_response({"status": "ok", "database": True}, status=status)

        app = web.Application()
        app.router.add_get("/healthz", healthz)
        runner = web.AppRunner(app)
        await runner.setup()
        context = None
        if tls:
            cert, key = self_signed(tmp_path)
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(cert, key)
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        runners.append(runner)
        port = site._server.sockets[0].getsockname()[1]
        return f"{'https' if tls else 'http'}://localhost:{port}/healthz"

    yield start
    released.set()
    for runner in runners:
        await runner.cleanup()


async def test_the_status_that_answered_is_reported(server):
    ours = await probe_health(await server())
    assert ours.status == 200 and ours.from_svc
    answer = await probe_health(await server(502))
    assert answer.status == 502 and answer.failure is None


async def test_another_servers_page_is_told_from_svcs_health_answer(server):
    answer = await probe_health(await server(page="<html>Coming soon</html>"))
    assert answer.status == 200 and not answer.from_svc
    assert answer.server == "parking/1.0"


async def test_a_certificate_nobody_vouches_for_is_named(server):
    answer = await probe_health(await server(tls=True))
    assert answer.status is None and "certificate of localhost is not trusted" in answer.failure


async def test_a_trusted_certificate_is_taken(server, tmp_path):
    url = await server(tls=True)
    trusted = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
    assert (await probe_health(url, ssl_context=trusted)).status == 200


async def test_a_closed_port_is_a_refused_connection():
    answer = await probe_health(f"http://127.0.0.1:{free_port()}/healthz")
    assert answer.status is None and "refused the connection" in answer.failure


async def test_silence_is_reported_as_such(server):
    answer = await probe_health(await server(slow=True), timeout=0.3)
    assert answer.status is None and answer.failure.startswith("nothing answered within")
