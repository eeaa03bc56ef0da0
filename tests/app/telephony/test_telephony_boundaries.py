"""The telephone surfaces' outer walls, as tests: a carrier webhook without a
signature is refused before its body is read; a pbx question from a public address
is refused even with the right secret; an HTTP tool aimed at this machine, a private
network, a link-local or a metadata address is refused (spec: telephony.md "Authentication"; core/egress.py)."""

from __future__ import annotations

import socket
import uuid

import anyio
import httpx
import pytest

from app.main import create_app
from app.tables import AuditEntry, TelephonyCall
from core.pipeline import ToolStatus
from tests.app.services.test_pipeline import owner  # noqa: F401  (fixture: an account id)
from tests.app.services.test_tools import _ask_with_tool, tool_body
from tests.app.telephony.deployment import SHARED_SECRET, deployment

pytestmark = pytest.mark.anyio

VOICE = "/api/telephony/carrier/voice"


async def _rejections() -> int:
    """Refused signatures, however they are counted (one entry per address and window)."""
    rows = await AuditEntry.select(AuditEntry.occurrences).where(
        AuditEntry.kind == "telephony.signature.rejected")
    return sum(row["occurrences"] for row in rows)


async def test_an_unsigned_webhook_is_refused_from_its_headers_alone(api, services):
    await deployment(api, services)
    # A body larger than the 16 KiB cap is refused for its signature, not its size:
    # the size is never looked at.
    refused = await api.post(VOICE, content=b"x" * 20000,
                             headers={"content-type": "application/x-www-form-urlencoded"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "bad_signature"
    # A body announced but never sent: the answer comes without waiting for it.
    host, port = api.base_url.host, api.base_url.port
    with socket.create_connection((host, port)) as raw:
        raw.settimeout(20)
        raw.sendall(b"POST " + VOICE.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: "
                    b"application/x-www-form-urlencoded\r\nContent-Length: 500\r\n\r\n")
        answer = await anyio.to_thread.run_sync(raw.recv, 4096)
    assert answer.startswith(b"HTTP/1.1 403")
    assert await _rejections() == 2 and await TelephonyCall.count() == 0


async def test_a_signed_but_oversized_webhook_is_still_413(api, services):
    await deployment(api, services)
    refused = await api.post(VOICE, content=b"x" * 20000, headers={
        "content-type": "application/x-www-form-urlencoded", "X-Carrier-Signature": "abc="})
    assert refused.status_code == 413


@pytest.mark.parametrize("address", ["203.0.113.9", "8.8.8.8", "100.64.0.1", "169.254.0.5",
                                     "2001:db8::1", "fe80::1"])
async def test_a_pbx_question_from_outside_is_refused_even_with_the_secret(api, services,
                                                                           address):
    await deployment(api, services, provider="pbx", line_provider="pbx")
    app = create_app(services, own_pool=False, scheduled_jobs=False)
    await app.start()
    transport = httpx.ASGITransport(app=app, client=(address, 5060))
    async with httpx.AsyncClient(transport=transport, base_url="http://svc") as outside:
        for question in ("answer?from=%2B441632960777&to=%2B441632960001", "continue?call=x"):
            refused = await outside.get(f"/api/telephony/pbx/{question}",
                                        headers={"x-service-telephony-key": SHARED_SECRET})
            assert refused.status_code == 403 and refused.text == ""
    assert await TelephonyCall.count() == 0


@pytest.mark.parametrize("url, reason", [
    ("http://127.0.0.1:9/weather", "loopback"),
    ("http://localhost:9/weather", "machine"),
    ("http://[::1]:9/weather", "loopback"),
    ("http://10.1.2.3/weather", "private"),
    ("http://192.168.0.10/weather", "private"),
    ("http://172.16.5.4/weather", "private"),
    ("http://[fd00::5]/weather", "private"),
    ("http://169.254.10.10/weather", "link-local"),
    ("http://[fe80::1]/weather", "link-local"),
    ("http://169.254.169.254/latest/meta-data", "metadata"),
    ("http://metadata.google.internal/computeMetadata/v1", "metadata"),
    ("http://[::ffff:10.0.0.1]/weather", "private"),
])
async def test_a_tool_aimed_inside_is_refused(services, fake, owner, url, reason):
    # Allowing a host on the list lets it through: tests/app/services/test_tools.py shows it for
    # loopback; nothing here may reach a private network for real.
    await services.http_tools.create(actor=uuid.uuid4(), fields=tool_body(url=url))
    refused = await _ask_with_tool(services, fake, owner, "weather", '{"city": "Oslo"}')
    assert refused.status is ToolStatus.ERROR and "not allowed" in refused.content
    assert reason in refused.content.lower()


@pytest.mark.parametrize("identifier", ["\x00abc", "é" * 10, "a\nb"])
async def test_a_continue_question_naming_no_possible_ticket_gets_the_empty_answer(
        api, services, identifier):
    # Found by fuzzing the pbx questions: a NUL in ``call`` reached the database and
    # failed there with a 500.
    await deployment(api, services, provider="pbx", line_provider="pbx")
    asked = await api.get("/api/telephony/pbx/continue", params={"call": identifier},
                          headers={"x-service-telephony-key": SHARED_SECRET})
    assert asked.status_code == 200 and asked.text == ""
