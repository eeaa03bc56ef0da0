"""The telephony settings resource, lines and the call log (spec: telephony.md)."""

from __future__ import annotations

import asyncpg
import pytest

from app.bundle import Services
from app.config import BootConfig
from app.tables import AuditEntry, Chat, RuntimeSetting, TelephonyCall
from tests.app.telephony.deployment import CREDENTIAL, LINE_NUMBER, PUBLIC, deployment
from tests.support.http import running_app

pytestmark = pytest.mark.anyio


# -- the settings resource

async def test_settings_resource_reads_credentials_only_as_stored_or_not(api, services):
    admin = await api.as_new_user(services, "root@example.org", role="superadmin")
    empty = (await api.get("/api/admin/telephony", headers=admin)).json()
    assert empty == {"provider": None, "public_base_url": None,
                     "effective_public_base_url": "http://127.0.0.1:8080",
                     "carrier_credential_set": False, "pbx_listen": None,
                     "pbx_listening": False, "shared_secret_set": False}
    stored = await api.put("/api/admin/telephony", headers=admin, json={
        "provider": "carrier", "public_base_url": PUBLIC, "carrier_credential": CREDENTIAL,
        "shared_secret": "s3cret-s3cret"})
    assert stored.status_code == 200, stored.text
    view = stored.json()
    assert view["carrier_credential_set"] and view["shared_secret_set"]
    assert view["effective_public_base_url"] == PUBLIC and CREDENTIAL not in stored.text
    rows = await RuntimeSetting.select()
    assert CREDENTIAL not in str(rows) and "s3cret-s3cret" not in str(rows)
    assert CREDENTIAL not in str(await AuditEntry.select())


async def test_settings_resource_is_break_glass_only(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    assert (await api.get("/api/admin/telephony", headers=admin)).status_code == 403
    assert (await api.put("/api/admin/telephony", headers=admin,
                          json={"provider": "pbx"})).status_code == 403


async def test_a_credential_without_the_encryption_key_is_refused_and_nothing_changes(
        database, boot):
    keyless = Services.build(BootConfig({k: v for k, v in boot.values.items()
                                         if k != "message_encryption_key"}))
    keyless.settings.cache_seconds = 0
    async with running_app(keyless) as client:
        admin = await client.as_new_user(keyless, "root@example.org", role="superadmin")
        refused = await client.put("/api/admin/telephony", headers=admin, json={
            "provider": "carrier", "carrier_credential": CREDENTIAL})
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "encryption_key_missing"
        after = (await client.get("/api/admin/telephony", headers=admin)).json()
        assert after["provider"] is None and not after["carrier_credential_set"]


async def test_public_address_must_be_https_and_empty_falls_back(api, services):
    admin = await api.as_new_user(services, "root@example.org", role="superadmin")
    refused = await api.put("/api/admin/telephony", headers=admin, json={
        "provider": "carrier", "public_base_url": "http://calls.example.org"})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "public_base_url"
    assert (await api.get("/api/admin/telephony", headers=admin)).json()["provider"] is None
    await api.put("/api/admin/telephony", headers=admin, json={"public_base_url": PUBLIC})
    cleared = (await api.put("/api/admin/telephony", headers=admin,
                             json={"public_base_url": ""})).json()
    assert cleared["public_base_url"] is None
    assert cleared["effective_public_base_url"] == "http://127.0.0.1:8080"


async def test_listen_address_is_listening_only_once_this_process_bound_it(api, services):
    admin = await api.as_new_user(services, "root@example.org", role="superadmin")
    view = (await api.put("/api/admin/telephony", headers=admin,
                          json={"pbx_listen": "10.0.0.5:9092"})).json()
    assert view["pbx_listen"] == "10.0.0.5:9092" and view["pbx_listening"] is False
    services.telephony.listener.bound("10.0.0.5:9092")
    assert (await api.get("/api/admin/telephony", headers=admin)).json()["pbx_listening"]
    bad = await api.put("/api/admin/telephony", headers=admin, json={"pbx_listen": "nowhere"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "pbx_listen"


async def test_read_only_fields_sent_back_are_ignored(api, services):
    admin = await api.as_new_user(services, "root@example.org", role="superadmin")
    view = (await api.get("/api/admin/telephony", headers=admin)).json()
    view["provider"] = "pbx"
    again = await api.put("/api/admin/telephony", headers=admin, json=view)
    assert again.status_code == 200 and again.json()["provider"] == "pbx"
    assert again.json()["carrier_credential_set"] is False


# -- per-account feature flags

async def test_feature_overrides_need_config_manage_and_win_for_their_account(api, services):
    setup = await deployment(api, services)
    path = f"/api/admin/users/{setup.owner_id}/features/features.voice"
    assert (await api.put(path, headers=setup.manager, json={"value": False})).status_code == 403
    view = (await api.put(path, headers=setup.admin, json={"value": False})).json()
    voice = next(f for f in view["features"] if f["key"] == "features.voice")
    assert voice == {"key": "features.voice", "override": False, "global": True,
                     "in_force": False}
    assert not await services.features.feature_on("features.voice", setup.owner_id)
    assert await services.features.feature_on("features.voice", None)
    cleared = (await api.delete(path, headers=setup.admin)).json()
    assert next(f for f in cleared["features"] if f["key"] == "features.voice")["in_force"]
    unknown = await api.put(f"/api/admin/users/{setup.owner_id}/features/server.port",
                            headers=setup.admin, json={"value": True})
    assert unknown.status_code == 404


# -- lines

async def test_a_new_line_is_normalised_switched_off_and_shows_its_agents_tool_count(
        api, services):
    setup = await deployment(api, services, enabled=False)
    tools = await api.patch(f"/api/agents/{setup.agent_id}", headers=setup.owner,
                            json={"tools": ["take_message", "book_appointment"]})
    assert tools.status_code == 200, tools.text
    line = setup.line
    assert line["e164"] == LINE_NUMBER and line["enabled"] is False
    assert line["provider"] == "carrier" and line["notice"] is None
    assert line["notice_in_force"].startswith("You are speaking with an automated assistant")
    listed = (await api.get("/api/admin/telephony/numbers", headers=setup.manager)).json()
    assert listed["data"][0]["agent_tool_count"] == 2 and "warning" not in listed["data"][0]


async def test_numbers_are_normalised_and_unique(api, services):
    setup = await deployment(api, services)
    body = {"e164": "0044 (1632) 960-001", "agent_id": setup.agent_id,
            "owner_user_id": setup.owner_id}
    taken = await api.post("/api/admin/telephony/numbers", headers=setup.admin, json=body)
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "number_taken"
    body["e164"] = "01632 960001"
    bad = await api.post("/api/admin/telephony/numbers", headers=setup.admin, json=body)
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "e164"
    body.update(e164="+44 1632 960 002", transfer_e164="0044.1632.960.003")
    made = (await api.post("/api/admin/telephony/numbers", headers=setup.admin, json=body))
    assert made.json()["e164"] == "+441632960002"
    assert made.json()["transfer_e164"] == "+441632960003"


async def test_only_the_agents_owner_or_an_administrator_binds_it_to_a_line(api, services):
    """telephony.manage alone does not put another account's agent before callers;
    another's agent is answered exactly like one that does not exist."""
    setup = await deployment(api, services, enabled=False)
    url = f"/api/admin/telephony/numbers/{setup.line['id']}"
    theirs = await api.patch(url, headers=setup.manager, json={"agent_id": setup.agent_id})
    unknown = await api.patch(url, headers=setup.manager,
                              json={"agent_id": "00000000-0000-0000-0000-000000000000"})
    assert theirs.status_code == unknown.status_code == 422
    assert theirs.json() == unknown.json()
    created = await api.post("/api/admin/telephony/numbers", headers=setup.manager, json={
        "e164": "+441632960007", "agent_id": setup.agent_id, "owner_user_id": setup.owner_id})
    assert created.status_code == 422 and created.json()["error"]["field"] == "agent_id"
    own = (await api.post("/api/agents", headers=setup.manager,
                          json={"name": "Desk", "model": "local"})).json()
    bound = await api.patch(url, headers=setup.manager, json={"agent_id": own["id"]})
    assert bound.status_code == 200 and bound.json()["agent_id"] == own["id"]
    rebound = await api.patch(url, headers=setup.admin, json={"agent_id": setup.agent_id})
    assert rebound.status_code == 200 and rebound.json()["agent_id"] == setup.agent_id
    # Changing other fields of a line someone else bound needs no say over its agent.
    assert (await api.patch(url, headers=setup.manager, json={"label": "Front desk"})
            ).status_code == 200


async def test_a_line_needs_a_callable_agent_and_an_active_owner(api, services):
    setup = await deployment(api, services, enabled=False)
    url = f"/api/admin/telephony/numbers/{setup.line['id']}"
    unknown = await api.patch(url, headers=setup.manager,
                              json={"agent_id": "00000000-0000-0000-0000-000000000000"})
    assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "agent_id"
    await api.patch(f"/api/agents/{setup.agent_id}", headers=setup.owner,
                    json={"archived": True})
    archived = await api.patch(url, headers=setup.manager, json={"enabled": True})
    assert archived.status_code == 422
    assert archived.json()["error"]["code"] == "agent_unavailable"
    await api.patch(f"/api/agents/{setup.agent_id}", headers=setup.owner,
                    json={"archived": False})
    await api.deactivate(setup.admin, setup.owner_id)
    gone = await api.patch(url, headers=setup.manager, json={"enabled": True})
    assert gone.status_code == 422 and gone.json()["error"]["field"] == "owner_user_id"


async def test_binding_to_an_administrator_is_allowed_with_a_warning(api, services):
    setup = await deployment(api, services, enabled=False)
    boss = await api.as_new_user(services, "boss@example.org", role="admin")
    boss_id = (await api.get("/api/me", headers=boss)).json()["id"]
    changed = await api.patch(f"/api/admin/telephony/numbers/{setup.line['id']}",
                              headers=setup.manager, json={"owner_user_id": boss_id})
    assert changed.status_code == 200 and "administrator" in changed.json()["warning"]


@pytest.mark.parametrize("fields, field", [
    ({"notice": "x" * 601}, "notice"),
    ({"log_days": 3651}, "log_days"),
    ({"transcript_days": -1}, "transcript_days"),
    ({"record_calls": True}, "recording_days"),
    ({"provider": "sip"}, "provider"),
    ({"transfer_e164": "12"}, "transfer_e164"),
    ({"agent_id": None}, "agent_id"),
])
async def test_line_rules_refuse_bad_values_and_change_nothing(api, services, fields, field):
    setup = await deployment(api, services, enabled=False)
    refused = await api.patch(f"/api/admin/telephony/numbers/{setup.line['id']}",
                              headers=setup.manager, json=fields)
    assert refused.status_code == 422 and refused.json()["error"]["field"] == field
    again = await api.get(f"/api/admin/telephony/numbers/{setup.line['id']}",
                          headers=setup.manager)
    assert again.json() == setup.line


async def test_limits_at_the_edge_are_accepted(api, services):
    setup = await deployment(api, services, enabled=False)
    line = await setup.patch_line(notice="n" * 600, log_days=3650, record_calls=True,
                                  recording_days=1)
    assert line["notice_in_force"] == "n" * 600 and line["log_days"] == 3650


async def test_announcements_go_only_to_a_chat_of_the_lines_own_account(api, services):
    setup = await deployment(api, services, enabled=False)
    stranger = await api.as_new_user(services, "other@example.org")
    stranger_id = (await api.get("/api/me", headers=stranger)).json()["id"]
    theirs, ours = Chat(owner_id=stranger_id), Chat(owner_id=setup.owner_id)
    await theirs.save()
    await ours.save()
    url = f"/api/admin/telephony/numbers/{setup.line['id']}"
    refused = await api.patch(url, headers=setup.manager,
                              json={"deliver_group_chat_id": str(theirs.id)})
    assert refused.status_code == 422
    line = await setup.patch_line(deliver_group_chat_id=str(ours.id))
    assert line["deliver_group_chat_id"] == str(ours.id)


async def test_patch_keeps_absent_fields_and_null_clears_the_three(api, services):
    setup = await deployment(api, services, enabled=False)
    chat = Chat(owner_id=setup.owner_id)
    await chat.save()
    await setup.patch_line(notice="Custom notice.", deliver_group_chat_id=str(chat.id),
                           label="Front desk")
    kept = await setup.patch_line(greeting="Hello.")
    assert kept["notice"] == "Custom notice." and kept["label"] == "Front desk"
    assert kept["transfer_e164"] == "+441632960999"
    cleared = await setup.patch_line(notice=None, deliver_group_chat_id=None,
                                     transfer_e164=None)
    assert cleared["notice"] is None and cleared["notice_in_force"].startswith("You are")
    assert cleared["deliver_group_chat_id"] is None and cleared["transfer_e164"] is None
    assert cleared["greeting"] == "Hello." and cleared["label"] == "Front desk"


async def test_a_new_line_cannot_start_switched_on(api, services):
    setup = await deployment(api, services, enabled=False)
    refused = await api.post("/api/admin/telephony/numbers", headers=setup.manager, json={
        "e164": "+441632960005", "agent_id": setup.agent_id,
        "owner_user_id": setup.owner_id, "enabled": True})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "enabled"


async def test_releasing_a_line_keeps_its_calls_in_the_log(api, services):
    setup = await deployment(api, services)
    call = TelephonyCall(number_id=setup.line["id"], e164=LINE_NUMBER, from_number="+4411",
                         provider="carrier", outcome="completed")
    await call.save()
    gone = await api.delete(f"/api/admin/telephony/numbers/{setup.line['id']}",
                            headers=setup.manager)
    assert gone.status_code == 204
    kept = (await api.get(f"/api/admin/telephony/calls/{call.id}", headers=setup.manager))
    assert kept.json()["number_id"] == setup.line["id"] and kept.json()["e164"] == LINE_NUMBER
    assert (await api.get("/api/admin/telephony/numbers", headers=setup.manager)).json() == {
        "data": []}


async def test_lines_need_telephony_manage(api, services):
    user = await api.as_new_user(services, "nobody@example.org")
    assert (await api.get("/api/admin/telephony/numbers", headers=user)).status_code == 403
    assert (await api.get("/api/admin/telephony/calls", headers=user)).status_code == 403


# -- the call log

async def _calls(setup, count: int, outcome: str = "completed") -> None:
    for index in range(count):
        await TelephonyCall(number_id=setup.line["id"], e164=LINE_NUMBER,
                            from_number=f"+44116{index:05d}", provider="carrier",
                            outcome=outcome).save()


async def test_the_call_log_pages_newest_first_with_a_cursor(api, services):
    setup = await deployment(api, services)
    await _calls(setup, 55)
    first = (await api.get("/api/admin/telephony/calls", headers=setup.manager)).json()
    assert len(first["data"]) == 50 and first["next_before"]
    second = (await api.get("/api/admin/telephony/calls", headers=setup.manager,
                            params={"before": first["next_before"]})).json()
    assert len(second["data"]) == 5 and second["next_before"] is None
    ids = [c["id"] for c in first["data"] + second["data"]]
    assert len(set(ids)) == 55
    starts = [c["started_at"] for c in first["data"] + second["data"]]
    assert starts == sorted(starts, reverse=True)


async def test_the_call_log_filters_by_line_and_outcome_and_bounds_the_page(api, services):
    setup = await deployment(api, services)
    await _calls(setup, 3)
    await _calls(setup, 2, outcome="notice_failed")
    page = (await api.get("/api/admin/telephony/calls", headers=setup.manager,
                          params={"outcome": "notice_failed", "number_id": setup.line["id"],
                                  "limit": 200})).json()
    assert [c["outcome"] for c in page["data"]] == ["notice_failed"] * 2
    for params, field in (({"limit": 201}, "limit"), ({"limit": 0}, "limit"),
                          ({"outcome": "hung_up"}, "outcome"), ({"before": "%%"}, "before")):
        refused = await api.get("/api/admin/telephony/calls", headers=setup.manager,
                                params=params)
        assert refused.status_code == 422 and refused.json()["error"]["field"] == field


async def test_the_database_holds_outcomes_to_the_eight_values(database, services):
    connection = await asyncpg.connect(database)
    try:
        with pytest.raises(asyncpg.CheckViolationError):
            await connection.execute(
                "INSERT INTO telephony_call (e164, from_number, provider, outcome) "
                "VALUES ('+441632960001', '+4411', 'carrier', 'hung_up')")
    finally:
        await connection.close()


async def test_one_call_shows_its_recording_and_tidying_marks(api, services):
    setup = await deployment(api, services)
    call = TelephonyCall(number_id=setup.line["id"], e164=LINE_NUMBER, from_number="+4411",
                         provider="pbx", outcome="completed", recording_failed=True)
    await call.save()
    await TelephonyCall.update({TelephonyCall.tidied_at: TelephonyCall.started_at}).where(
        TelephonyCall.id == call.id)
    view = (await api.get(f"/api/admin/telephony/calls/{call.id}",
                          headers=setup.manager)).json()
    assert view["recording_failed"] is True and view["tidied_away"] is True
    missing = await api.get("/api/admin/telephony/calls/not-an-id", headers=setup.manager)
    assert missing.status_code == 404
