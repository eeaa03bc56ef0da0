"""The message encryption key a start uses, and the check that it is the right one.

With the embedded database and no ``SVC__MESSAGE_ENCRYPTION_KEY``, the first start
makes a key and keeps it in the data directory (mode 0600), beside the database it
seals credentials for; later starts read it. A key given in the environment or the
TOML file always wins.

A start with the wrong key (a database restored without its key, a key file lost and
made anew, a mistyped variable) would serve credentials it cannot open. So the first
start with a key seals a known text into ``runtime_setting`` (under a key that is no
declared setting, so no listing shows it), and every start opens it: another key stops
the start with one line instead. A database from before the check is judged by the
credentials it already holds.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from app.config import BootConfig, env_name
from app.crypto import SecretBox
from app.tables import RuntimeSetting
from core import settings as registry
from core.records import frozen

KEY_SETTING = "message_encryption_key"
KEY_FILE = "message_encryption_key"
CHECK_KEY = "message_encryption_key.check"
CHECK_TEXT = "svc: the message encryption key of this database"


class KeyMismatch(Exception):
    """The stored credentials were sealed with another key; the message says what to do."""


@frozen
class StartKey:
    boot: BootConfig
    #: the key file this start wrote, if it made the key
    made: Path | None = None
    #: the key file the key in force was read from or made in; None when it was given
    kept_in: Path | None = None


def key_file(boot: BootConfig) -> Path:
    return boot.data_dir / KEY_FILE


def key_for_start(boot: BootConfig, *, make: bool) -> StartKey:
    """``boot`` with the key in force: given, read from the data directory, or (with
    ``make``, for the embedded database only) made there now."""
    if boot[KEY_SETTING] or boot["database.url"]:
        return StartKey(boot)
    path = key_file(boot)
    try:
        return StartKey(boot.with_values(**{KEY_SETTING: path.read_text().strip()}),
                        kept_in=path)
    except FileNotFoundError:
        if not make:
            return StartKey(boot)
    text = secrets.token_hex(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text + "\n")
    return StartKey(boot.with_values(**{KEY_SETTING: text}), made=path, kept_in=path)


def made_notice(path: Path) -> str:
    return (f"Made the message encryption key in {path} (readable by this user only). "
            f"Back it up with the database: stored credentials cannot be read without it. "
            f"{env_name(KEY_SETTING)} overrides it.")


def backup_notice(start: StartKey) -> str:
    """What a backup says of the key: not in it, and which one to keep apart."""
    if start.kept_in is not None:
        where = str(start.kept_in)
    elif start.boot[KEY_SETTING]:
        where = f"the key set as {env_name(KEY_SETTING)} (or in the configuration file)"
    else:
        return "No message encryption key is set, so the backup needs none to be read."
    return (f"The message encryption key is not in the backup: keep a copy of {where} "
            f"apart from it, since the restored credentials open only with that key.")


def restore_notice(start: StartKey) -> str:
    """What a restore says of the key the restored database's credentials need."""
    if start.boot[KEY_SETTING]:
        where = start.kept_in or env_name(KEY_SETTING)
        return (f"svc will open the restored credentials with the message encryption key "
                f"in {where}; its start says so in one line if that is not the key the "
                f"backup was made with.")
    key = "the message encryption key kept with this backup"
    put_back = (f"set {env_name(KEY_SETTING)} to {key}" if start.boot["database.url"] else
                f"put {key} in {key_file(start.boot)} (or set {env_name(KEY_SETTING)})")
    return f"Before starting svc, {put_back}: the restored credentials are sealed with it."


def mismatch_message(boot: BootConfig) -> str:
    where = "this database" if boot["database.url"] else f"the data in {boot.data_dir}"
    put_back = "" if boot["database.url"] else f", or put that key back in {key_file(boot)}"
    return (f"{where} was sealed with another message encryption key: set "
            f"{env_name(KEY_SETTING)} to the key it was sealed with{put_back}")


async def _stored_credentials() -> list[tuple[str, str]]:
    encrypted = [key for key, setting in registry.REGISTRY.items() if setting.encrypted]
    rows = await RuntimeSetting.select(RuntimeSetting.key, RuntimeSetting.value).where(
        RuntimeSetting.key.is_in(encrypted))
    return [(row["key"], json.loads(row["value"])) for row in rows
            if row["value"] is not None and json.loads(row["value"])]


async def verify_key(box: SecretBox, boot: BootConfig) -> None:
    """Raise :class:`KeyMismatch` when ``box`` is not the key the database's credentials
    were sealed with; seal the check the first time a key is used."""
    if not box.can_seal:
        return
    row = await RuntimeSetting.select(RuntimeSetting.value).where(
        RuntimeSetting.key == CHECK_KEY).first()
    if row is not None:
        if box.open(json.loads(row["value"]), CHECK_KEY) != CHECK_TEXT:
            raise KeyMismatch(mismatch_message(boot))
        return
    stored = await _stored_credentials()
    if stored and all(box.open(token, key) is None for key, token in stored):
        raise KeyMismatch(mismatch_message(boot))
    await RuntimeSetting.insert(RuntimeSetting(
        key=CHECK_KEY, value=json.dumps(box.seal(CHECK_TEXT, CHECK_KEY)))
    ).on_conflict(action="DO NOTHING")
