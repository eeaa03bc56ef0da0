"""The message encryption key of a start (``app.message_key``) and what an operator
reads when there is none."""

from __future__ import annotations

import json
import os

import pytest

from app.config import BootConfig
from app.crypto import SecretBox
from app.message_key import CHECK_KEY, KeyMismatch, key_for_start, verify_key
from app.tables import RuntimeSetting

pytestmark = pytest.mark.anyio


def test_the_embedded_default_makes_a_key_once_and_keeps_it(tmp_path):
    boot = BootConfig({"storage.data_dir": str(tmp_path)})
    assert key_for_start(boot, make=False).boot["message_encryption_key"] is None
    made = key_for_start(boot, make=True)
    assert made.made == tmp_path / "message_encryption_key"
    assert made.made.stat().st_mode & 0o777 == 0o600
    again = key_for_start(boot, make=True)
    assert again.made is None
    assert again.boot["message_encryption_key"] == made.boot["message_encryption_key"]
    SecretBox(again.boot["message_encryption_key"]).seal("x", "y")


def test_a_given_key_wins_and_an_external_database_gets_none_made(tmp_path):
    given = BootConfig({"storage.data_dir": str(tmp_path), "message_encryption_key": "ab" * 32})
    kept = key_for_start(given, make=True)
    assert kept.boot is given and kept.made is None
    external = BootConfig({"storage.data_dir": str(tmp_path),
                           "database.url": "postgresql://db.internal/svc"})
    assert key_for_start(external, make=True).boot["message_encryption_key"] is None
    assert not (tmp_path / "message_encryption_key").exists()


async def test_another_key_is_refused_and_the_same_key_is_not(database):
    boot = BootConfig({})
    first, other = SecretBox(os.urandom(32).hex()), SecretBox(os.urandom(32).hex())
    await verify_key(first, boot)
    await verify_key(first, boot)
    with pytest.raises(KeyMismatch, match="SVC__MESSAGE_ENCRYPTION_KEY"):
        await verify_key(other, boot)
    await verify_key(SecretBox(None), boot)  # no key: nothing to compare, nothing sealed


async def test_a_database_from_before_the_check_is_judged_by_its_credentials(database):
    sealed_elsewhere = SecretBox(os.urandom(32).hex()).seal("token", "telephony.auth_token_enc")
    await RuntimeSetting.insert(RuntimeSetting(key="telephony.auth_token_enc",
                                               value=json.dumps(sealed_elsewhere)))
    with pytest.raises(KeyMismatch, match="another message encryption key"):
        await verify_key(SecretBox(os.urandom(32).hex()), BootConfig({}))
    assert await RuntimeSetting.count().where(RuntimeSetting.key == CHECK_KEY) == 0


async def test_without_a_key_the_error_names_the_variable_and_the_restart(database):
    from app.bundle import Services
    from tests.support.http import running_app

    services = Services.build(BootConfig({"database.url": "postgresql://elsewhere/svc"}))
    try:
        async with running_app(services) as client:
            admin = await client.as_new_user(services, "root@example.org", "superadmin")
            refused = await client.put("/api/admin/telephony", headers=admin,
                                       json={"carrier_credential": "a-carrier-token"})
            assert refused.status_code == 409
            error = refused.json()["error"]
            assert error["code"] == "encryption_key_missing"
            assert "SVC__MESSAGE_ENCRYPTION_KEY" in error["message"]
            assert "restart" in error["message"]
            # The console's readiness page says the same.
            checks = (await client.get("/api/admin/telephony/preflight",
                                       headers=admin)).json()["checks"]
            [key_check] = [check for check in checks if check["id"] == "message_key"]
            assert key_check["status"] == "fail"
            assert "SVC__MESSAGE_ENCRYPTION_KEY" in key_check["message"]
            assert "restart" in key_check["message"]
    finally:
        await services.aclose()
