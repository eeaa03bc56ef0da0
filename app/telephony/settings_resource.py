"""The telephony settings resource (``/api/admin/telephony``) and the public address.

One JSON object over five runtime settings (DESIGN.md "Settings resource"):

==========================  ==============================  ==========================
field                       setting                         reads back
==========================  ==============================  ==========================
provider                    telephony.provider              the value
public_base_url             telephony.public_base_url       the value (null: follows)
effective_public_base_url   (read only)                     the address in force
carrier_credential          telephony.auth_token_enc        carrier_credential_set
pbx_listen                  telephony.pbx_listen            the value
pbx_listening               (read only)                     bound by this process now
shared_secret               telephony.pbx_key_enc           shared_secret_set
==========================  ==============================  ==========================

A change is checked whole before anything is written, so a refused PUT changes
nothing. Credentials are write-only and stored encrypted through the settings
service; without ``message_encryption_key`` a credential is refused with 409
``encryption_key_missing`` (spec: telephony.md "Prerequisites" 3).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from app.crypto import SecretBox, key_missing
from app.errors import Unprocessable
from app.services.accounts import Identity
from app.services.settings import Settings, Snapshot
from app.telephony.listener_state import ListenerState
from core import settings as registry

#: Resource field -> runtime setting, for the fields that are written.
PLAIN_FIELDS = {
    "provider": "telephony.provider",
    "public_base_url": "telephony.public_base_url",
    "pbx_listen": "telephony.pbx_listen",
}
SECRET_FIELDS = {
    "carrier_credential": "telephony.auth_token_enc",
    "shared_secret": "telephony.pbx_key_enc",
}
def effective_public_base(snapshot: Snapshot) -> str:
    """The public address in force: ``telephony.public_base_url``, else
    ``server.public_url`` — without a trailing slash, so paths join cleanly."""
    return str(snapshot["telephony.public_base_url"] or "").rstrip("/")


def public_url(snapshot: Snapshot, path: str) -> str:
    """An https address of this deployment as the carrier is told it."""
    return effective_public_base(snapshot) + path


def media_url(snapshot: Snapshot, path: str) -> str:
    """The ``wss://`` address of the audio connection under the public address."""
    parts = urlsplit(effective_public_base(snapshot))
    return f"wss://{parts.netloc}{parts.path}{path}"


def _own_value(snapshot: Snapshot, key: str) -> Any:
    """A setting's own value, without following another setting when null."""
    if key in snapshot.runtime:
        return snapshot.runtime[key]
    return snapshot.boot.values.get(key, registry.get(key).default)


class TelephonySettings:
    def __init__(self, settings: Settings, box: SecretBox, listener: ListenerState) -> None:
        self.settings = settings
        self.box = box
        self.listener = listener

    async def view(self) -> dict[str, Any]:
        snapshot = await self.settings.snapshot()
        listen = snapshot["telephony.pbx_listen"]
        return {
            "provider": snapshot["telephony.provider"],
            "public_base_url": _own_value(snapshot, "telephony.public_base_url"),
            "effective_public_base_url": effective_public_base(snapshot) or None,
            "carrier_credential_set": await self.settings.secret("telephony.auth_token_enc")
            is not None,
            "pbx_listen": listen,
            "pbx_listening": self.listener.listening_on(listen),
            "shared_secret_set": await self.settings.secret("telephony.pbx_key_enc") is not None,
        }

    def _checked_plain(self, field: str, value: Any) -> Any:
        key = PLAIN_FIELDS[field]
        if value == "" and field != "provider":
            return None  # spec: an empty public address falls back; an empty listen opens none
        try:
            return registry.check_runtime_value(registry.get(key), value)
        except registry.SettingError as exc:
            message = exc.message.replace(key, field, 1)
            raise Unprocessable(message, code=exc.code, field=field) from None

    def _checked_secret(self, field: str, value: Any) -> str | None:
        if value is None or value == "":
            return None  # a null or empty credential removes the stored one
        if not isinstance(value, str):
            raise Unprocessable(f"{field} must be a string.", field=field)
        if not self.box.can_seal:
            raise key_missing(field)
        return value

    async def change(self, identity: Identity, fields: dict[str, Any]) -> dict[str, Any]:
        """Apply the given fields (absent ones are kept); every check before any write."""
        plain = {f: self._checked_plain(f, v) for f, v in fields.items() if f in PLAIN_FIELDS}
        secret = {f: self._checked_secret(f, v) for f, v in fields.items() if f in SECRET_FIELDS}
        for field, value in plain.items():
            await self.settings.change(identity, PLAIN_FIELDS[field], value)
        for field, value in secret.items():
            if value is None:
                await self.settings.change(identity, SECRET_FIELDS[field], None)
            else:
                await self.settings.change_secret(identity, SECRET_FIELDS[field], value)
        return await self.view()
