"""Behind a trusted proxy, everything that judges a client by its address judges the
client the proxy names (``server.trusted_proxies``; docs/deployment.md): the pbx
questions' private-source check, the sign-in throttle, the carrier's lock-out, the
audit entries and the access log.

The test client connects from 127.0.0.1, named here as the trusted proxy, so what it
writes in ``X-Forwarded-For`` stands for the client. Without the front door every
request would come from 127.0.0.1: private, and one address for every client.
"""

from __future__ import annotations

import json
import logging

import pytest

from app.tables import AuditEntry, LoginFailure, TelephonySignatureFailure
from tests.app.telephony.deployment import (
    CALLER,
    LINE_NUMBER,
    SHARED_SECRET,
    deployment,
    voice_params,
)

pytestmark = pytest.mark.anyio

PUBLIC_CLIENT, OTHER_CLIENT, OFFICE_PBX = "203.0.113.9", "203.0.113.10", "10.0.0.7"


@pytest.fixture
def boot(boot):
    """The shared boot configuration, with the test client's address as the proxy."""
    return boot.with_values(server__trusted_proxies="127.0.0.1")


def from_client(address: str, **headers: str) -> dict[str, str]:
    return {"X-Forwarded-For": address, **headers}


async def test_the_pbx_private_source_check_and_its_audit_see_the_forwarded_client(
        api, services):
    await deployment(api, services, provider="pbx", line_provider="pbx")
    question = {"from": CALLER, "to": LINE_NUMBER}
    key = {"x-service-telephony-key": SHARED_SECRET}
    public = await api.get("/api/telephony/pbx/answer", params=question,
                           headers=from_client(PUBLIC_CLIENT, **key))
    assert public.status_code == 403 and public.text == ""
    private = await api.get("/api/telephony/pbx/answer", params=question,
                            headers=from_client(OFFICE_PBX, **key))
    assert private.status_code == 200 and private.text, private.text
    refused = [json.loads(row["data"]) for row in await AuditEntry.select().where(
        AuditEntry.kind == "telephony.refused")]
    assert [(data["reason"], data["address"]) for data in refused] == [
        ("public_source", PUBLIC_CLIENT)]


async def test_the_sign_in_throttle_counts_the_forwarded_client(api, services):
    await services.accounts.create("ann@example.org", "correct horse battery staple")
    wrong = {"email": "ann@example.org", "password": "not it"}
    answer = await api.post("/api/auth/login", json=wrong, headers=from_client(PUBLIC_CLIENT))
    assert answer.status_code == 401
    assert [row["address"] for row in await LoginFailure.select()] == [PUBLIC_CLIENT]
    # Past the free failures of one address, that client waits; another does not.
    await LoginFailure.insert(*[LoginFailure(email=f"guess{n}@example.org",
                                             address=PUBLIC_CLIENT) for n in range(25)])
    guess = {"email": "someone@example.org", "password": "guess"}
    slowed = await api.post("/api/auth/login", json=guess, headers=from_client(PUBLIC_CLIENT))
    assert slowed.status_code == 429, slowed.text
    other = await api.post("/api/auth/login", json=guess, headers=from_client(OTHER_CLIENT))
    assert other.status_code == 401, other.text


async def test_the_carrier_lock_out_and_the_access_log_see_the_forwarded_client(
        api, services, caplog):
    await deployment(api, services)
    with caplog.at_level(logging.INFO, logger="svc.access"):
        refused = await api.post("/api/telephony/carrier/voice", data=voice_params(),
                                 headers=from_client(PUBLIC_CLIENT,
                                                     **{"X-Twilio-Signature": "bm90IGl0"}))
    assert refused.status_code == 403
    assert [row["address"] for row in await TelephonySignatureFailure.select()] == [
        PUBLIC_CLIENT]
    logged = [record for record in caplog.records if record.name == "svc.access"
              and record.path == "/api/telephony/carrier/voice"]
    assert [record.client for record in logged] == [PUBLIC_CLIENT]
