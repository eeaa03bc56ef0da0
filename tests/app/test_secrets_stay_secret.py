"""No stored credential ever appears in a response, a log line or an audit entry."""

import logging

import pytest

from app.log_format import JsonFormatter

pytestmark = pytest.mark.anyio


async def test_stored_credentials_never_leak(api, services, encryption_key, caplog):
    bodies: list[str] = []

    async def keep(response):
        await response.aread()
        bodies.append(response.text)
        bodies.append(str(response.headers))

    api.event_hooks["response"].append(keep)
    secrets = {
        "password": "user password 0001",
        "carrier": "carrier-auth-token-0002",
        "pbx": "pbx-shared-secret-0003",
        "key": encryption_key,
    }
    with caplog.at_level(logging.DEBUG):
        root = await api.as_new_user(services, "root@example.org", role="superadmin")
        created = await api.post("/api/admin/users", headers=root, json={
            "email": "ann@example.org", "password": secrets["password"]})
        assert created.status_code == 201
        await api.login("ann@example.org", secrets["password"])
        await api.post("/api/auth/login", json={"email": "ann@example.org", "password": "x" * 12})
        for key, value in (("telephony.auth_token_enc", secrets["carrier"]),
                           ("telephony.pbx_key_enc", secrets["pbx"])):
            assert (await api.put(f"/api/admin/settings/{key}", headers=root,
                                  json={"value": value})).status_code == 200
            await api.get(f"/api/admin/settings/{key}", headers=root)
        await api.get("/api/admin/settings", headers=root)
        await api.get("/api/admin/audit", headers=root)
        await api.get("/api/admin/users", headers=root)
    log_lines = [JsonFormatter().format(record) for record in caplog.records]
    audit = [str(row) for row in await services.audit.query(limit=1000)]
    everything = "\n".join(bodies + log_lines + audit)
    assert len(bodies) > 10 and log_lines and audit
    for name, value in secrets.items():
        assert value not in everything, f"the {name} leaked"
