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
    await assert_nothing_leaked(secrets, bodies, caplog, services, least_bodies=10)


async def test_no_secret_of_any_kind_leaks_over_a_run_touching_all(api, services, caplog):
    """API key, provider keys (the instance's and an account's own), tool secret,
    carrier credential, shared secret and notification URL: set, used, listed, changed and failed with,
    and none of them in any answer, log line or audit entry. The one answer allowed to
    show a value is the one that mints an API key."""
    from tests.fakes.upstream import Behaviour, FakeUpstream

    bodies: list[str] = []

    async def keep(response):
        await response.aread()
        if not (response.request.url.path == "/api/profile/api-keys"
                and response.request.method == "POST"):
            bodies.append(response.text)
        bodies.append(str(response.headers))

    api.event_hooks["response"].append(keep)
    secrets = {"provider key": "sk-instance-provider-key-0004",
               "own provider key": "sk-own-provider-key-0005",
               "tool secret": "tool-secret-header-value-0006",
               "carrier credential": "carrier-credential-0007",
               "shared secret": "pbx-shared-secret-0008",
               "notification URL": "/services/T0009/B0009/notification-url-path-0009"}
    with caplog.at_level(logging.DEBUG):
        async with FakeUpstream() as upstream:
            root = await api.as_new_user(services, "root@example.org", role="superadmin")
            user = await api.as_new_user(services, "dev@example.org")
            provider = await api.post("/api/admin/providers", headers=root, json={
                "name": "fake", "base_url": upstream.base_url,
                "api_key": secrets["provider key"], "models": ["fake-small"]})
            assert provider.status_code == 201, provider.text
            provider_id = provider.json()["id"]
            await api.get(f"/api/admin/providers/{provider_id}", headers=root)
            await api.get("/api/admin/providers", headers=root)
            await api.post(f"/api/admin/providers/{provider_id}/refresh", headers=root)
            own = await api.post("/api/profile/provider-keys", headers=user, json={
                "provider_id": provider_id, "api_key": secrets["own provider key"]})
            assert own.status_code in (200, 201), own.text
            await api.get("/api/profile/provider-keys", headers=user)
            minted = await api.post("/api/profile/api-keys", headers=user, json={"name": "k"})
            secrets["api key"] = minted.json()["key"]
            v1 = {"Authorization": f"Bearer {secrets['api key']}"}
            await api.get("/api/profile/api-keys", headers=user)
            await api.get("/v1/models", headers=v1)
            chat = {"model": "fake-small", "messages": [{"role": "user", "content": "hi"}]}
            assert (await api.post("/v1/chat/completions", headers=v1, json=chat)
                    ).status_code == 200
            await api.post("/v1/chat/completions", headers=v1, json={**chat, "stream": True})
            await api.post("/v1/chat/completions", headers=v1, json={**chat, "n": 2})
            # An upstream that echoes the key it was sent, as some do on a 401: first
            # the account's own key, then, once that is removed, the instance's.
            for sent in ("own provider key", "provider key"):
                if sent == "provider key":
                    own_id = (await api.get("/api/profile/provider-keys", headers=user)
                              ).json()["data"][0]["id"]
                    await api.delete(f"/api/profile/provider-keys/{own_id}", headers=user)
                for status in (401, 500):
                    upstream.behaviour = Behaviour(status=status, error_message=(
                        f"Incorrect API key provided: {secrets[sent]}"))
                    for stream in (False, True):
                        echoed = await api.post("/v1/chat/completions", headers=v1,
                                                json={**chat, "stream": stream})
                        assert echoed.status_code >= 400
                        # quoted with the key taken out, or (a failure of ours,
                        # not the caller's) not quoted at all
                        assert ("[provider key]" in echoed.text
                                or "Incorrect API key" not in echoed.text)
            tool = await api.post("/api/admin/tools", headers=root, json={
                "name": "lookup", "description": "Looks things up.",
                "parameters": {"type": "object", "properties": {}},
                "url": "https://tools.example.org/lookup", "secret_header_name": "X-Tool-Key",
                "secret_header_value": secrets["tool secret"]})
            assert tool.status_code == 201, tool.text
            await api.get(f"/api/admin/tools/{tool.json()['id']}", headers=root)
            await api.patch(f"/api/admin/tools/{tool.json()['id']}", headers=root,
                            json={"description": "Looks up more."})
            await api.get("/api/admin/tools", headers=root)
            telephony = await api.put("/api/admin/telephony", headers=root, json={
                "public_base_url": "https://calls.example.org",
                "carrier_credential": secrets["carrier credential"],
                "shared_secret": secrets["shared secret"], "provider": "pbx"})
            assert telephony.status_code == 200, telephony.text
            await api.get("/api/admin/telephony", headers=root)
            target = await api.post("/api/notify-targets", headers=user, json={
                "kind": "chat_a", "url": "https://hooks.example.com" + secrets["notification URL"]})
            assert target.status_code == 201, target.text
            await api.get(f"/api/notify-targets/{target.json()['id']}", headers=user)
            await api.patch(f"/api/notify-targets/{target.json()['id']}", headers=user,
                            json={"label": "Front desk"})
            await api.get("/api/notify-targets", headers=user)
            await api.get(f"/api/notify-targets?account_id={target.json()['account_id']}",
                          headers=root)
            await api.get("/api/admin/telephony/preflight", headers=root)
            await api.get("/api/admin/settings", headers=root)
            await api.get("/api/admin/audit", headers=root)
            await api.get("/api/admin/usage", headers=root)
    await assert_nothing_leaked(secrets, bodies, caplog, services, least_bodies=40)


async def assert_nothing_leaked(secrets: dict[str, str], bodies: list[str], caplog, services,
                                least_bodies: int) -> None:
    """No secret stands in the bodies and headers seen, the log or the audit log."""
    log_lines = [JsonFormatter().format(record) for record in caplog.records]
    audit = [str(row) for row in await services.audit.query(limit=1000)]
    everything = "\n".join(bodies + log_lines + audit)
    assert len(bodies) > least_bodies and log_lines and audit
    for name, value in secrets.items():
        assert value not in everything, f"the {name} leaked"
