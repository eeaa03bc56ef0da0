"""Shared set-up for the telephony tests: a switched-on deployment with one line.

No tests here; the telephony test modules import these helpers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
from twilio.request_validator import RequestValidator

PUBLIC = "https://calls.example.org"
CREDENTIAL = "carrier-auth-token-0123456789abcdef"
SHARED_SECRET = "pbx-shared-secret-for-tests"
LINE_NUMBER = "+441632960001"
CALLER = "+441632960777"


@dataclass
class Deployment:
    api: Any
    services: Any
    admin: dict[str, str]
    manager: dict[str, str]
    owner_id: str
    owner: dict[str, str]
    agent_id: str
    line: dict[str, Any] = field(default_factory=dict)

    async def setting(self, key: str, value: Any) -> None:
        response = await self.api.put(f"/api/admin/settings/{key}", headers=self.admin,
                                      json={"value": value})
        assert response.status_code == 200, response.text

    async def patch_line(self, **fields: Any) -> dict[str, Any]:
        response = await self.api.patch(f"/api/admin/telephony/numbers/{self.line['id']}",
                                        headers=self.manager, json=fields)
        assert response.status_code == 200, response.text
        self.line = response.json()
        return self.line


async def deployment(api, services, *, provider: str | None = "carrier",
                     line_provider: str = "carrier", enabled: bool = True,
                     switched_on: bool = True) -> Deployment:
    """A super-administrator, a manager, an owner with an agent, and one line."""
    admin = await api.as_new_user(services, "root@example.org", role="superadmin")
    manager = await api.as_new_user(services, "desk@example.org",
                                    permissions=("telephony.manage",))
    owner = await api.as_new_user(services, "shop@example.org")
    owner_id = (await api.get("/api/me", headers=owner)).json()["id"]
    agent = await api.post("/api/agents", headers=owner, json={"name": "Reception",
                                                               "model": "local"})
    assert agent.status_code == 201, agent.text
    found = Deployment(api, services, admin, manager, owner_id, owner, agent.json()["id"])
    if switched_on:
        for key, value in (("features.telephony", True), ("features.voice", True),
                           ("features.voice_live", True), ("voice_live.tts_stream", True),
                           ("voice_live.tts_stream_url", "local")):
            await found.setting(key, value)
    settings = {"public_base_url": PUBLIC, "carrier_credential": CREDENTIAL,
                "shared_secret": SHARED_SECRET}
    if provider is not None:
        settings["provider"] = provider
    response = await api.put("/api/admin/telephony", headers=admin, json=settings)
    assert response.status_code == 200, response.text
    line = await api.post("/api/admin/telephony/numbers", headers=admin, json={
        "e164": LINE_NUMBER, "agent_id": found.agent_id, "owner_user_id": owner_id,
        "provider": line_provider, "transfer_e164": "+441632960999"})
    assert line.status_code == 201, line.text
    found.line = line.json()
    if enabled:
        await found.patch_line(enabled=True)
    return found


def signature(url: str, params: dict[str, str], credential: str = CREDENTIAL) -> str:
    """What the carrier sends, computed by the carrier's own library."""
    return RequestValidator(credential).compute_signature(url, params)


def voice_params(caller: str = CALLER, dialled: str = LINE_NUMBER,
                 call_sid: str = "CA0001") -> dict[str, str]:
    return {"CallSid": call_sid, "AccountSid": "AC0001", "From": caller, "To": dialled,
            "CallStatus": "ringing", "Direction": "inbound", "ApiVersion": "2010-04-01"}


async def carrier_post(client: httpx.AsyncClient, path: str, params: dict[str, str], *,
                       url: str | None = None, header: str = "X-Carrier-Signature",
                       credential: str = CREDENTIAL) -> httpx.Response:
    signed_url = url if url is not None else PUBLIC + path
    return await client.post(path, data=params,
                             headers={header: signature(signed_url, params, credential)})
