"""Feature flags per account: ``features.*`` switched on or off for one account.

The global value of a flag is the runtime setting in force (a runtime value wins
over the boot flag without restart; spec: telephony.md "Prerequisites"). An account
may carry its own value for a flag in ``feature_override``; for that account the
override wins. ``voice_not_enabled`` is decided this way for a line's account
(spec: telephony.md "Refusal reasons": "off for that account").
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app import db
from app.errors import NotFound
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.services.settings import Settings, Snapshot
from app.tables import FeatureOverride
from core import settings as registry

#: The flags that take per-account overrides: every boolean ``features.*`` setting.
FEATURE_KEYS: tuple[str, ...] = tuple(
    key for key, setting in registry.REGISTRY.items()
    if key.startswith("features.") and setting.kind is bool)

_UPSERT = """
INSERT INTO feature_override (account_id, key, value, updated_by)
VALUES ($1, $2, $3, $4)
ON CONFLICT (account_id, key)
DO UPDATE SET value = EXCLUDED.value, updated_by = EXCLUDED.updated_by, updated_at = now()
"""


def checked_key(key: str) -> str:
    """A flag name that takes overrides, or 404 for anything else."""
    if key not in FEATURE_KEYS:
        raise NotFound(f"No feature flag {key!r}.")
    return key


class FeatureFlags:
    def __init__(self, settings: Settings, audit: AuditLog) -> None:
        self.settings = settings
        self.audit = audit

    async def feature_on(self, key: str, account_id: UUID | None,
                         snapshot: Snapshot | None = None) -> bool:
        """Whether ``key`` is on for ``account_id``: its override, else the global value."""
        checked_key(key)
        if account_id is not None:
            row = await FeatureOverride.select(FeatureOverride.value).where(
                (FeatureOverride.account_id == account_id) & (FeatureOverride.key == key)
            ).first()
            if row is not None:
                return bool(row["value"])
        snapshot = snapshot or await self.settings.snapshot()
        return bool(snapshot[key])

    async def all_on(self, keys: tuple[str, ...], account_id: UUID | None,
                     snapshot: Snapshot | None = None) -> bool:
        snapshot = snapshot or await self.settings.snapshot()
        for key in keys:
            if not await self.feature_on(key, account_id, snapshot):
                return False
        return True

    async def overrides(self, account_id: UUID) -> dict[str, bool]:
        rows = await FeatureOverride.select(FeatureOverride.key, FeatureOverride.value).where(
            FeatureOverride.account_id == account_id)
        return {row["key"]: row["value"] for row in rows}

    async def view(self, account_id: UUID) -> dict[str, Any]:
        """Each flag for the account: its override (or null) and the value in force."""
        snapshot = await self.settings.snapshot()
        own = await self.overrides(account_id)
        return {"account_id": str(account_id), "features": [
            {"key": key, "override": own.get(key), "global": bool(snapshot[key]),
             "in_force": own.get(key, bool(snapshot[key]))}
            for key in FEATURE_KEYS]}

    async def set_override(self, identity: Identity, account_id: UUID, key: str,
                           value: bool) -> None:
        checked_key(key)
        async with db.connection() as connection:
            await connection.execute(_UPSERT, account_id, key, value, identity.account_id)
        await self.audit.record("feature.override.set", actor=identity.account_id,
                                subject=str(account_id), data={"key": key, "value": value})

    async def clear_override(self, identity: Identity, account_id: UUID, key: str) -> None:
        checked_key(key)
        await FeatureOverride.delete().where(
            (FeatureOverride.account_id == account_id) & (FeatureOverride.key == key))
        await self.audit.record("feature.override.cleared", actor=identity.account_id,
                                subject=str(account_id), data={"key": key})
