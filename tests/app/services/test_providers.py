"""Providers, users' own keys, model resolution and the usage totals."""

import datetime as dt

import pytest

from app.services.usage import UsageRecord
from tests.fakes.upstream import FakeUpstream

pytestmark = pytest.mark.anyio


async def test_admin_registers_a_provider_and_refreshes_its_models(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    async with FakeUpstream() as upstream:
        upstream.behaviour.models = ("m-alpha", "m-beta")
        created = await api.post("/api/admin/providers", headers=admin, json={
            "name": "fake", "base_url": upstream.base_url, "api_key": "instance-key-1",
            "models": ["m-alpha"]})
        assert created.status_code == 201, created.text
        assert created.json()["api_key_set"] is True and "instance-key-1" not in created.text
        refreshed = await api.post(f"/api/admin/providers/{created.json()['id']}/refresh",
                                   headers=admin)
        assert refreshed.json()["models"] == ["m-alpha", "m-beta"]
        assert upstream.requests[-1].headers["authorization"] == "Bearer instance-key-1"


async def test_a_model_name_belongs_to_one_provider(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    clash = await api.created_twice("/api/admin/providers", admin, {
        "name": "one", "base_url": "http://127.0.0.1:9", "models": ["shared"]}, name="two")
    assert clash.status_code == 409 and clash.json()["error"]["code"] == "model_taken"


async def test_a_deleted_provider_is_on_record_by_its_name_and_frees_its_models(api, services):
    from app.tables import AuditEntry

    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    body = {"name": "gone", "base_url": "http://127.0.0.1:9", "models": ["m"]}
    provider = (await api.post("/api/admin/providers", headers=admin, json=body)).json()
    url = f"/api/admin/providers/{provider['id']}"
    assert (await api.delete(url, headers=admin)).status_code == 204
    assert (await api.get(url, headers=admin)).status_code == 404
    entries = await AuditEntry.select().where(AuditEntry.kind == "provider.deleted").output(
        load_json=True)
    assert [(e["subject"], e["data"]) for e in entries] == [(provider["id"], {"name": "gone"})]
    body["name"] = "again"  # its model name is free once it is gone
    assert (await api.post("/api/admin/providers", headers=admin, json=body)).status_code == 201


async def test_a_provider_change_keeps_what_is_not_sent_and_a_null_key_removes_the_key(
        api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    provider = (await api.post("/api/admin/providers", headers=admin, json={
        "name": "p", "base_url": "http://127.0.0.1:9", "api_key": "k", "models": ["m"]})).json()
    url = f"/api/admin/providers/{provider['id']}"
    renamed = (await api.patch(url, headers=admin, json={"name": "q", "models": None})).json()
    assert (renamed["name"], renamed["models"], renamed["api_key_set"]) == ("q", ["m"], True)
    keyless = (await api.patch(url, headers=admin, json={"api_key": None})).json()
    assert (keyless["name"], keyless["api_key_set"]) == ("q", False)


async def test_a_users_own_key_replaces_the_instance_key(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    ann = await api.as_new_user(services, "ann@example.org")
    provider = (await api.post("/api/admin/providers", headers=admin, json={
        "name": "p", "base_url": "http://127.0.0.1:9", "api_key": "instance", "models": ["m"]})).json()
    me = (await api.get("/api/me", headers=ann)).json()
    import uuid

    before = await services.providers.resolve("m", uuid.UUID(me["id"]))
    assert before.upstream.api_key == "instance"
    stored = await api.post("/api/profile/provider-keys", headers=ann,
                            json={"provider_id": provider["id"], "api_key": "anns-own"})
    assert stored.status_code == 201 and "anns-own" not in stored.text
    after = await services.providers.resolve("m", uuid.UUID(me["id"]))
    assert after.upstream.api_key == "anns-own" and after.provider == "p"
    key_id = stored.json()["data"][0]["id"]
    bob = await api.as_new_user(services, "bob@example.org")
    assert (await api.delete(f"/api/profile/provider-keys/{key_id}", headers=bob)).status_code == 404
    assert (await api.delete(f"/api/profile/provider-keys/{key_id}", headers=ann)).status_code == 204


async def test_unknown_model_is_a_clear_error(services):
    from app.services.providers import ModelNotFound

    with pytest.raises(ModelNotFound):
        await services.providers.resolve("nope", None)
    local = await services.providers.resolve("local", None)
    assert local.is_local


async def test_ordinary_users_cannot_manage_providers(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    assert (await api.get("/api/admin/providers", headers=ann)).status_code == 403
    models = await api.get("/api/models", headers=ann)
    assert models.json()["data"] == ["local"]


async def test_usage_totals_by_day_source_user_key_and_model(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    me = (await api.get("/api/me", headers=admin)).json()
    import uuid

    account = uuid.UUID(me["id"])
    services.usage.record(UsageRecord(account, "m", "p", "api", "ok", 10, 5, 100))
    services.usage.record(UsageRecord(account, "m", "p", "app", "error", 1, 0, 50))
    services.usage.record(UsageRecord(account, "local", "local", "api", "client_disconnected"))
    await services.usage.drain()
    totals = (await api.get("/api/admin/usage", headers=admin)).json()
    by_source = {row["bucket"]: row for row in totals["by_source"]}
    assert by_source["api"]["requests"] == 2 and by_source["api"]["prompt_tokens"] == 10
    assert by_source["app"]["errors"] == 1
    assert totals["by_day"][0]["bucket"] == dt.datetime.now(dt.UTC).date().isoformat()
    assert {row["bucket"] for row in totals["by_model"]} == {"m", "local"}
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert [(r["bucket"], r["source"], r["requests"]) for r in totals["by_day_source"]] == [
        (today, "api", 2), (today, "app", 1)]
    bad = await api.get("/api/admin/usage", headers=admin, params={"since": "2026-13-01"})
    assert bad.status_code == 422
