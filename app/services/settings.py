"""Settings in force: boot values, runtime overrides in the database, and who may change
what (declared in ``core.settings``).

Reads go through a snapshot of the overrides cached for ``cache_seconds``; a write made
by this process drops its cache at once, and other processes see it within the cache
window, so a runtime value wins without a restart. While the database cannot be
reached the last snapshot read stays in force.
"""

from __future__ import annotations

import json
import time
from typing import Any, Mapping

from app.config import BootConfig
from app.crypto import EncryptionKeyMissing, SecretBox, key_missing
from app.db import UNAVAILABLE_ERRORS
from app.errors import ApiError, NotFound, Unprocessable
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.tables import RuntimeSetting
from core import settings as registry
from core.egress import parse_allow_hosts
from core.records import frozen
from core.settings import Access, Setting


@frozen
class _Write:
    """One checked value about to be stored; ``audit_value`` says whether the audit
    trail may show it (not for credentials and secrets)."""

    key: str
    value: Any
    audit_value: bool


class Snapshot:
    """Boot values plus runtime overrides at one moment; cheap to read many keys from."""

    def __init__(self, boot: BootConfig, runtime: Mapping[str, Any]) -> None:
        self.boot = boot
        self.runtime = runtime

    def __getitem__(self, key: str) -> Any:
        return registry.resolve(key, self.boot.values, self.runtime)


def may_change(identity: Identity, setting: Setting) -> bool:
    if setting.access is Access.BOOT:
        return False
    if setting.access is Access.SUPERADMIN:
        return identity.is_superadmin
    return identity.has(setting.access.value)


class Settings:
    def __init__(self, boot: BootConfig, box: SecretBox, audit: AuditLog,
                 cache_seconds: float = 1.0) -> None:
        self.boot = boot
        self.box = box
        self.audit = audit
        self.cache_seconds = cache_seconds
        self._cached: tuple[float, dict[str, Any]] | None = None
        self._refreshing = False

    def _kept_overrides(self) -> dict[str, Any] | None:
        """The overrides read last when they may still be answered, else None. Not a
        coroutine: two reads a ``/v1`` request are answered from here."""
        cached = self._cached
        if cached is not None and (time.monotonic() - cached[0] < self.cache_seconds
                                   or self._refreshing):
            # Fresh, or being read again already: requests arriving together while it
            # is read use the last values instead of each running the same query.
            return cached[1]
        return None

    async def _overrides(self) -> dict[str, Any]:
        kept = self._kept_overrides()
        if kept is not None:
            return kept
        self._refreshing = True
        try:
            return await self._read_overrides(time.monotonic())
        finally:
            self._refreshing = False

    async def _read_overrides(self, now: float) -> dict[str, Any]:
        try:
            overrides = await _stored_overrides()
        except UNAVAILABLE_ERRORS:
            if self._cached is None:
                raise
            # The database is out of reach: the last values read stay in force, so
            # the surfaces that decide from settings alone keep deciding (and the
            # telephone paths reach the admission that refuses calls lookup_failed).
            return self._cached[1]
        self._cached = (now, overrides)
        return overrides

    def forget_cache(self) -> None:
        self._cached = None

    async def snapshot(self) -> Snapshot:
        kept = self._kept_overrides()
        return Snapshot(self.boot, kept if kept is not None else await self._overrides())

    async def fresh_snapshot(self) -> Snapshot:
        """The values as stored this moment, past this process's cache: for a page that
        must show what was just saved, whichever process saved it."""
        return Snapshot(self.boot, await _stored_overrides())

    async def get(self, key: str) -> Any:
        # What ``snapshot()[key]`` answers, without the snapshot: read on every request.
        kept = self._kept_overrides()
        return registry.resolve(key, self.boot.values,
                                kept if kept is not None else await self._overrides())

    async def egress_allow_hosts(self) -> tuple[str, ...]:
        """The administrator's allow list of the egress gate (``egress.allow_hosts``)."""
        return parse_allow_hosts(await self.get("egress.allow_hosts"))

    async def secret(self, key: str) -> str | None:
        """A decrypted credential, or None when absent or unreadable."""
        setting = registry.get(key)
        assert setting.encrypted, key
        return self.box.open(await self.get(key), key)

    def _writable(self, identity: Identity, key: str) -> Setting:
        try:
            setting = registry.get(key)
        except registry.SettingError:
            raise NotFound(f"No setting {key!r}.") from None
        if not may_change(identity, setting):
            # Known settings the caller may not change answer like unknown ones.
            raise NotFound(f"No setting {key!r}.")
        return setting

    async def _store(self, key: str, value: Any, identity: Identity, audit_value: bool) -> None:
        if await self._unchanged(key, value):
            return  # a form saves every field: only what it changes is written and audited
        payload = json.dumps(value)
        await RuntimeSetting.insert(RuntimeSetting(key=key, value=payload,
                                                   updated_by=identity.account_id)
                                    ).on_conflict(
            target=RuntimeSetting.key, action="DO UPDATE",
            values=[RuntimeSetting.value, RuntimeSetting.updated_by, RuntimeSetting.updated_at])
        self.forget_cache()
        await self.audit.record("settings.changed", actor=identity.account_id, subject=key,
                                data={"value": value} if audit_value else {"stored": value is not None})

    async def _unchanged(self, key: str, value: Any) -> bool:
        """Whether storing ``value`` leaves ``key`` as it stands: equal to its override,
        or, with none, to what the boot configuration or the default gives it. Read from
        the database, not the cache, which may be a second behind another process, and
        not into it: inside a save's transaction the rows read are not yet committed."""
        overrides = await _stored_overrides()
        if key in overrides:
            return overrides[key] == value
        if key in self.boot.values:
            return self.boot.values[key] == value
        return registry.default_in_force(key, self.boot.values, overrides) == value

    def _prepared(self, identity: Identity, key: str, value: Any) -> _Write:
        """The write ``value`` makes to ``key``, checked (and a credential sealed), or the
        refusal: 404 for a setting this caller may not change, 422 for a bad value."""
        setting = self._writable(identity, key)
        if setting.encrypted and value is not None:
            if not isinstance(value, str) or not value:
                raise Unprocessable(f"{key} must be a non-empty string.", field=key)
            try:
                return _Write(key, self.box.seal(value, key), audit_value=False)
            except EncryptionKeyMissing:
                raise key_missing(key) from None
        try:
            value = registry.check_runtime_value(setting, value)
        except registry.SettingError as exc:
            raise Unprocessable(exc.message, code=exc.code, field=key) from None
        return _Write(key, value, audit_value=not setting.hidden)

    async def change(self, identity: Identity, key: str, value: Any) -> None:
        write = self._prepared(identity, key, value)
        await self._store(write.key, write.value, identity, write.audit_value)

    async def change_secret(self, identity: Identity, key: str, plaintext: str) -> None:
        if plaintext is None:
            raise Unprocessable(f"{key} must be a non-empty string.", field=key)
        await self.change(identity, key, plaintext)

    async def change_many(self, identity: Identity, values: Mapping[str, Any]) -> None:
        """Change several settings at once, or none: every value is checked first, and a
        refusal names each bad one (``errors``, the first also as ``field``)."""
        writes: list[_Write] = []
        refused: list[ApiError] = []
        for key, value in values.items():
            try:
                writes.append(self._prepared(identity, key, value))
            except Unprocessable as error:
                refused.append(error)
        if refused:
            raise Unprocessable(
                refused[0].message if len(refused) == 1
                else f"{len(refused)} settings were refused; nothing was changed.",
                code=refused[0].code if len(refused) == 1 else "invalid_values",
                field=refused[0].field,
                errors=[{"field": e.field, "code": e.code, "message": e.message}
                        for e in refused])
        async with RuntimeSetting._meta.db.transaction():
            for write in writes:
                await self._store(write.key, write.value, identity, write.audit_value)
        self.forget_cache()

    async def reset(self, identity: Identity, key: str) -> None:
        """Drop the runtime override so the boot value (or default) applies again."""
        self._writable(identity, key)
        await RuntimeSetting.delete().where(RuntimeSetting.key == key)
        self.forget_cache()
        await self.audit.record("settings.reset", actor=identity.account_id, subject=key)

    def describe(self, setting: Setting, snapshot: Snapshot, identity: Identity) -> dict[str, Any]:
        """A setting as the admin configuration shows it; hidden values only as stored-or-not."""
        view: dict[str, Any] = {
            "key": setting.key,
            "type": setting.kind.__name__,
            "description": setting.description,
            "area": setting.area,
            "access": setting.access.value,
            "may_change": may_change(identity, setting),
            "restart_required": setting.restart or setting.access is Access.BOOT,
            "minimum": setting.minimum,
            "maximum": setting.maximum,
            "choices": list(setting.choices) if setting.choices else None,
            "nullable": setting.nullable,
            "follows": setting.follows,
            "encrypted": setting.encrypted,
            "overridden": setting.key in snapshot.runtime,
        }
        if setting.hidden:
            value = snapshot[setting.key]
            view["value_set"] = (self.box.open(value, setting.key) is not None
                                 if setting.encrypted else value is not None)
        else:
            view["value"] = snapshot[setting.key]
            view["boot_value"] = registry.resolve(setting.key, self.boot.values, {})
            view["default"] = registry.default_in_force(setting.key, self.boot.values,
                                                        snapshot.runtime)
        return view


async def _stored_overrides() -> dict[str, Any]:
    """Every runtime override as stored, by key (a JSON null is a deliberate null)."""
    rows = await RuntimeSetting.select(RuntimeSetting.key, RuntimeSetting.value)
    return {row["key"]: json.loads(row["value"]) if row["value"] is not None else None
            for row in rows if row["key"] in registry.REGISTRY}
