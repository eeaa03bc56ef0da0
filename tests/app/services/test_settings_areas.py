"""Settings by area: each described in a sentence, saved an area at a time through
``PATCH /api/admin/settings`` (every value checked first; one refused, none changed),
and the recognition rate limited to the two rates that convert."""

import pytest

from app.tables import AuditEntry
from core import settings as registry

pytestmark = pytest.mark.anyio


@pytest.fixture
async def admin(api, services):
    return await api.as_new_user(services, "boss@example.org", role="admin")


async def _changes() -> int:
    return await AuditEntry.count().where(AuditEntry.kind == "settings.changed")


def test_every_setting_says_in_a_sentence_what_it_does_and_belongs_to_an_area():
    for setting in registry.REGISTRY.values():
        text = setting.description
        assert text[0].isupper() or text.startswith(("host:port", "32-byte")), setting.key
        assert text.endswith("."), setting.key
        assert len(text.split()) >= 5, f"{setting.key}: {text!r} says too little"
        assert setting.area in registry.AREAS, setting.key
    used = {setting.area for setting in registry.REGISTRY.values()}
    assert used == set(registry.AREAS)  # no empty area in the list


async def test_the_list_names_the_areas_in_order_and_each_settings_area(api, admin):
    listed = (await api.get("/api/admin/settings", headers=admin)).json()
    assert [area["name"] for area in listed["areas"]] == list(registry.AREAS)
    assert all(area["title"] and area["summary"].endswith(".") for area in listed["areas"])
    by_key = {s["key"]: s for s in listed["data"]}
    assert by_key["telephony.max_concurrent_calls"]["area"] == "limits"
    assert by_key["api.chat_retention_days"]["area"] == "retention"
    assert by_key["voice.phone.barge_rms"]["area"] == "voice"
    assert by_key["notifications.enabled"]["area"] == "notifications"
    assert by_key["voice_live.stt_sample_rate"]["choices"] == [8000, 16000]


async def test_an_area_is_saved_in_one_request(api, services, admin):
    answer = await api.patch("/api/admin/settings", headers=admin, json={"values": {
        "telephony.max_concurrent_calls": 5, "telephony.tool_timeout_secs": 20}})
    assert answer.status_code == 200, answer.text
    assert [(s["key"], s["value"], s["overridden"]) for s in answer.json()["data"]] == [
        ("telephony.max_concurrent_calls", 5, True), ("telephony.tool_timeout_secs", 20, True)]
    assert await services.settings.get("telephony.max_concurrent_calls") == 5
    assert await services.settings.get("telephony.tool_timeout_secs") == 20
    assert await _changes() == 2


async def test_saving_an_area_writes_and_audits_only_what_changes(api, services):
    admin = await api.as_new_user(services, "root@example.org", role="superadmin")
    values = {"telephony.max_concurrent_calls": 5, "telephony.tool_timeout_secs": 20,
              "telephony.pbx_listen": None}  # never set: nothing to change
    first = await api.patch("/api/admin/settings", headers=admin, json={"values": values})
    assert first.status_code == 200, first.text
    assert await _changes() == 2
    again = await api.patch("/api/admin/settings", headers=admin, json={"values": {
        **values, "telephony.tool_timeout_secs": 25}})
    assert again.status_code == 200, again.text
    assert await _changes() == 3
    assert await services.settings.get("telephony.tool_timeout_secs") == 25
    listed = {s["key"]: s for s in (await api.get("/api/admin/settings",
                                                  headers=admin)).json()["data"]}
    assert listed["telephony.pbx_listen"]["overridden"] is False


async def test_one_refused_value_changes_nothing_and_every_refusal_is_named(api, services,
                                                                           admin):
    answer = await api.patch("/api/admin/settings", headers=admin, json={"values": {
        "telephony.max_concurrent_calls": 5,
        "telephony.tool_timeout_secs": 61,
        "voice.silence_threshold_ms": "long"}})
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["code"] == "invalid_values"
    assert error["field"] == "telephony.tool_timeout_secs"
    assert [(e["field"], e["code"]) for e in error["errors"]] == [
        ("telephony.tool_timeout_secs", "out_of_range"),
        ("voice.silence_threshold_ms", "invalid_value")]
    assert "at most 60" in error["errors"][0]["message"]
    assert await services.settings.get("telephony.max_concurrent_calls") == 2
    assert await services.settings.get("telephony.tool_timeout_secs") == 8
    assert await _changes() == 0


async def test_a_setting_the_caller_may_not_change_refuses_the_whole_request(api, services):
    config = await api.as_new_user(services, "cfg@example.org", permissions=("config.manage",))
    for key in ("voice_live.tts_stream", "no.such.setting"):
        answer = await api.patch("/api/admin/settings", headers=config, json={"values": {
            "telephony.max_concurrent_calls": 5, key: True}})
        assert answer.status_code == 404, answer.text
    assert await services.settings.get("telephony.max_concurrent_calls") == 2
    assert await _changes() == 0


@pytest.mark.parametrize("body, field", [({"values": {}}, "values"), ({"values": []}, "values"),
                                         ({}, "values")])
async def test_a_request_naming_no_setting_is_refused(api, admin, body, field):
    answer = await api.patch("/api/admin/settings", headers=admin, json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field


async def test_credentials_in_an_area_are_stored_sealed(api, services):
    root = await api.as_new_user(services, "root@example.org", role="superadmin")
    answer = await api.patch("/api/admin/settings", headers=root, json={"values": {
        "voice_live.stt_api_key_enc": "sk-recogniser", "voice_live.stt_model": "whisper-2"}})
    assert answer.status_code == 200, answer.text
    assert "sk-recogniser" not in answer.text
    assert answer.json()["data"][0]["value_set"] is True
    assert await services.settings.secret("voice_live.stt_api_key_enc") == "sk-recogniser"


@pytest.mark.parametrize("rate", [24000, 44100, 8001, 0, "16000"])
async def test_the_recognition_rate_is_8000_or_16000_only(api, services, admin, rate):
    one = await api.put("/api/admin/settings/voice_live.stt_sample_rate", headers=admin,
                        json={"value": rate})
    assert one.status_code == 422, one.text
    assert one.json()["error"]["field"] == "voice_live.stt_sample_rate"
    grouped = await api.patch("/api/admin/settings", headers=admin, json={"values": {
        "voice_live.stt_model": "whisper-2", "voice_live.stt_sample_rate": rate}})
    assert grouped.status_code == 422
    assert [e["field"] for e in grouped.json()["error"]["errors"]] == [
        "voice_live.stt_sample_rate"]
    assert await services.settings.get("voice_live.stt_sample_rate") == 16000
    assert await services.settings.get("voice_live.stt_model") == "whisper-1"
    assert await _changes() == 0


async def test_8000_is_accepted_for_the_recognition_rate(api, services, admin):
    answer = await api.put("/api/admin/settings/voice_live.stt_sample_rate", headers=admin,
                           json={"value": 8000})
    assert answer.status_code == 200, answer.text
    assert await services.settings.get("voice_live.stt_sample_rate") == 8000


def test_a_boot_value_of_another_rate_is_refused_at_start():
    with pytest.raises(registry.SettingError):
        registry.check_boot_value(registry.get("voice_live.stt_sample_rate"), 24000)
