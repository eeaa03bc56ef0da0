"""Runtime settings through /api/admin/settings, and the registry's rules."""

import pytest

from app.config import BootConfig
from app.services.settings import Snapshot
from core import settings as registry

pytestmark = pytest.mark.anyio


async def put_setting(api, headers, key: str, value):
    """PUT one setting's new value as the caller of ``headers``; the response."""
    return await api.put(f"/api/admin/settings/{key}", headers=headers, json={"value": value})


async def test_a_runtime_value_wins_over_boot_without_restart(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    assert await services.settings.get("features.telephony") is False
    response = await put_setting(api, admin, "features.telephony", True)
    assert response.status_code == 200, response.text
    assert response.json()["value"] is True and response.json()["overridden"] is True
    assert await services.settings.get("features.telephony") is True
    reset = await api.delete("/api/admin/settings/features.telephony", headers=admin)
    assert reset.json()["value"] is False


async def test_out_of_range_value_is_refused_with_422_naming_the_field(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    response = await put_setting(api, admin, "telephony.tool_timeout_secs", 61)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "telephony.tool_timeout_secs"
    assert await services.settings.get("telephony.tool_timeout_secs") == 8


async def test_wrong_type_is_refused(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    response = await put_setting(api, admin, "features.voice", "yes")
    assert response.status_code == 422


async def test_api_settings_belong_to_the_superadmin(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    root = await api.as_new_user(services, "root@example.org", role="superadmin")
    refused = await put_setting(api, admin, "api.rate_per_min", 5)
    assert refused.status_code == 404
    accepted = await put_setting(api, root, "api.rate_per_min", 5)
    assert accepted.status_code == 200
    listed = {s["key"]: s for s in (await api.get("/api/admin/settings", headers=admin)).json()["data"]}
    assert listed["api.rate_per_min"]["may_change"] is False
    assert listed["features.voice"]["may_change"] is True


async def test_config_manage_holder_changes_dials_but_not_voice_engines(api, services):
    config = await api.as_new_user(services, "cfg@example.org", permissions=("config.manage",))
    ok = await put_setting(api, config, "voice.phone.barge_min_ms", 300)
    assert ok.status_code == 200
    no = await put_setting(api, config, "voice_live.tts_stream", True)
    assert no.status_code == 404


async def test_ordinary_user_cannot_read_settings(api, services):
    user = await api.as_new_user(services, "ann@example.org")
    assert (await api.get("/api/admin/settings", headers=user)).status_code == 403


async def test_boot_only_settings_are_not_writable(api, services):
    root = await api.as_new_user(services, "root@example.org", role="superadmin")
    response = await put_setting(api, root, "server.port", 1)
    assert response.status_code == 404


async def test_cleared_phone_dial_follows_the_shared_one(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    assert await services.settings.get("voice.phone.silence_threshold_ms") == 900
    await put_setting(api, admin, "voice.phone.silence_threshold_ms", None)
    assert await services.settings.get("voice.phone.silence_threshold_ms") == 1500
    await put_setting(api, admin, "voice.silence_threshold_ms", 1200)
    assert await services.settings.get("voice.phone.silence_threshold_ms") == 1200


async def test_credentials_are_stored_sealed_and_shown_only_as_stored(api, services):
    root = await api.as_new_user(services, "root@example.org", role="superadmin")
    response = await put_setting(api, root, "telephony.auth_token_enc", "carrier-secret-123")
    assert response.status_code == 200
    assert response.json()["value_set"] is True and "value" not in response.json()
    assert "carrier-secret-123" not in response.text
    assert await services.settings.secret("telephony.auth_token_enc") == "carrier-secret-123"
    raw = await services.settings.get("telephony.auth_token_enc")
    assert raw.startswith("v1.") and "carrier-secret-123" not in raw


def test_speech_and_barge_rms_are_clamped_on_read():
    boot = BootConfig({"voice.phone.speech_rms": 1.7, "voice.phone.barge_rms": -0.5})
    snapshot = Snapshot(boot, {})
    assert snapshot["voice.phone.speech_rms"] == 1.0
    assert snapshot["voice.phone.barge_rms"] == 0.0


def test_every_spec_setting_is_declared_once():
    spec_keys = {
        "api.rate_per_min", "api.chat_retention_days", "api.cors_allow_all",
        "features.public_api", "features.telephony", "features.voice", "features.voice_live",
        "telephony.provider", "telephony.public_base_url", "telephony.max_concurrent_calls",
        "telephony.pbx_listen", "telephony.auth_token_enc", "telephony.pbx_key_enc",
        "telephony.tool_timeout_secs", "voice_live.tts_stream", "voice_live.tts_stream_url",
        "voice_live.stt_sample_rate", "voice_live.stt_stream_kind", "storage.recordings_dir",
        "message_encryption_key", "server.public_url",
        *(f"voice.phone.{d}" for d in ("silence_threshold_ms", "min_speech_ms", "turn_detection",
                                       "speech_rms", "barge_rms", "barge_min_ms")),
    }
    assert spec_keys <= set(registry.REGISTRY)
    assert registry.REGISTRY["telephony.auth_token_enc"].encrypted
    assert registry.REGISTRY["telephony.pbx_listen"].restart


@pytest.mark.parametrize("key, value, default", [
    ("voice.phone.silence_threshold_ms", 900, 1500),
    ("voice.phone.min_speech_ms", 80, 200),  # re-derived from the field corpus
    ("voice.phone.speech_rms", 0.004, 0.012),
    ("voice.phone.barge_rms", 0.004, 0.035),
    ("voice.phone.turn_detection", True, False),
    ("voice.phone.barge_min_ms", 100, 320),
    ("telephony.max_concurrent_calls", 2, None),
    ("telephony.tool_timeout_secs", 8, None),
    ("api.rate_per_min", 60, None),
    ("voice_live.stt_sample_rate", 16000, None),
])
def test_spec_defaults(key, value, default):
    snapshot = Snapshot(BootConfig({}), {})
    assert snapshot[key] == value
    if default is not None:
        assert snapshot[key.replace("voice.phone.", "voice.")] == default


def test_public_base_url_falls_back_to_server_public_url():
    snapshot = Snapshot(BootConfig({"server.public_url": "https://svc.example.org"}), {})
    assert snapshot["telephony.public_base_url"] == "https://svc.example.org"
    with pytest.raises(registry.SettingError):
        registry.check_runtime_value(registry.get("telephony.public_base_url"), "http://x.org")


@pytest.mark.parametrize("listen, public", [
    ({}, "http://127.0.0.1:8080"),
    ({"server.port": 18201}, "http://127.0.0.1:18201"),
    ({"server.host": "svc.lan", "server.port": 18201}, "http://svc.lan:18201"),
    # Bound to every interface: the machine's own loopback, of the same family.
    ({"server.host": "0.0.0.0", "server.port": 18201}, "http://127.0.0.1:18201"),
    ({"server.host": "::", "server.port": 18201}, "http://[::1]:18201"),
    ({"server.host": "fd00::5"}, "http://[fd00::5]:8080"),
])
def test_an_unset_public_url_is_where_the_server_listens(listen, public):
    snapshot = Snapshot(BootConfig(listen), {})
    assert snapshot["server.public_url"] == public
    assert snapshot["telephony.public_base_url"] == public


def test_a_public_url_that_is_set_wins_over_the_listen_address():
    boot = BootConfig({"server.port": 18201, "server.public_url": "https://svc.example.org"})
    assert boot["server.public_url"] == "https://svc.example.org"


async def test_the_settings_list_shows_the_public_url_default_in_force(database, boot):
    from app.bundle import Services
    from tests.support.http import running_app

    unset = Services.build(BootConfig({**{k: v for k, v in boot.values.items()
                                          if k != "server.public_url"}, "server.port": 18201}))
    async with running_app(unset) as api:
        root = await api.as_new_user(unset, "root@example.org", role="superadmin")
        shown = (await api.get("/api/admin/settings/server.public_url", headers=root)).json()
    assert shown["value"] == shown["default"] == "http://127.0.0.1:18201"


async def test_storing_a_credential_without_the_key_is_409_and_stores_nothing(database, boot):
    from app.bundle import Services
    from app.config import BootConfig
    from tests.support.http import running_app

    keyless = Services.build(BootConfig({k: v for k, v in boot.values.items()
                                         if k != "message_encryption_key"}))
    async with running_app(keyless) as api:
        root = await api.as_new_user(keyless, "root@example.org", role="superadmin")
        response = await put_setting(api, root, "telephony.pbx_key_enc", "shared secret")
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "encryption_key_missing"
        listed = (await api.get("/api/admin/settings/telephony.pbx_key_enc", headers=root)).json()
        assert listed["value_set"] is False and listed["overridden"] is False


async def test_a_credential_sealed_under_another_key_reads_as_absent(database, boot, services):
    import secrets

    from app.bundle import Services
    from tests.support.http import running_app

    async with running_app(services) as api:
        root = await api.as_new_user(services, "root@example.org", role="superadmin")
        await put_setting(api, root, "telephony.auth_token_enc", "old credential")
    rekeyed = Services.build(boot.with_values(message_encryption_key=secrets.token_hex(32)))
    rekeyed.settings.cache_seconds = 0
    assert await rekeyed.settings.secret("telephony.auth_token_enc") is None
    async with running_app(rekeyed) as api:
        headers = {"Authorization": f"Bearer {await api.login('root@example.org', 'correct horse battery staple')}"}
        response = await api.get("/api/admin/settings/telephony.auth_token_enc", headers=headers)
        assert response.status_code == 200 and response.json()["value_set"] is False
