"""API keys: minted by a user in their profile, shown once, stored as a fingerprint.

A key acts as the user who minted it (same role, same reach); there are no scopes.
Lookup is by SHA-256 fingerprint through a unique index, so timing does not depend on
the secret. Revocation and expiry take effect on the very next request: nothing is
cached. Counting a request against the per-minute limit is a single atomic statement
(``core.ratelimit``), so the limit holds across server processes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import time
from typing import Any
from uuid import UUID

from app.http.errors import NotFound, Unprocessable
from app.services.access import parse_id
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app import db
from app.tables import ApiKey
from core import ratelimit

KEY_PREFIX = "sk-svc-"
DISPLAY_CHARS = 12
MAX_EXPIRY_DAYS = 3650


def fingerprint(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def masked(value: str) -> str:
    """How a key may appear in an error: its first characters and last four."""
    if len(value) <= 12:
        return "****"
    return f"{value[:7]}...{value[-4:]}"


def public_view(row: dict[str, Any]) -> dict[str, Any]:
    def iso(value: dt.datetime | None) -> str | None:
        return value.isoformat() if value else None

    expired = row["expires_at"] is not None and row["expires_at"] <= dt.datetime.now(dt.UTC)
    return {
        "id": str(row["id"]),
        "name": row["name"],
        "prefix": row["prefix"],
        "created_at": iso(row["created_at"]),
        "expires_at": iso(row["expires_at"]),
        "last_used_at": iso(row["last_used_at"]),
        "revoked_at": iso(row["revoked_at"]),
        "state": "revoked" if row["revoked_at"] else ("expired" if expired else "active"),
    }


_VIEW_COLUMNS = (ApiKey.id, ApiKey.name, ApiKey.prefix, ApiKey.created_at, ApiKey.expires_at,
                 ApiKey.last_used_at, ApiKey.revoked_at, ApiKey.account_id)

_CONSUME = """
UPDATE api_key SET
    rate_used = CASE WHEN rate_window = $2 THEN rate_used + 1 ELSE 1 END,
    rate_window = $2,
    last_used_at = now()
WHERE id = $1 AND revoked_at IS NULL AND (rate_window IS DISTINCT FROM $2 OR rate_used < $3)
RETURNING rate_used
"""


class ApiKeys:
    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit

    async def mint(self, identity: Identity, name: str,
                   expires_in_days: int | None) -> tuple[dict[str, Any], str]:
        """A new key; the value is returned here once and never again."""
        name = name.strip()
        if not 1 <= len(name) <= 200:
            raise Unprocessable("Name the key (1 to 200 characters).", field="name")
        if expires_in_days is not None and not 1 <= expires_in_days <= MAX_EXPIRY_DAYS:
            raise Unprocessable(f"expires_in_days must be 1 to {MAX_EXPIRY_DAYS}.",
                                field="expires_in_days")
        value = KEY_PREFIX + secrets.token_urlsafe(32)
        expires = (dt.datetime.now(dt.UTC) + dt.timedelta(days=expires_in_days)
                   if expires_in_days else None)
        row = ApiKey(account_id=identity.account_id, name=name, prefix=value[:DISPLAY_CHARS],
                     fingerprint=fingerprint(value), expires_at=expires)
        await row.save()
        await self.audit.record("api_key.created", actor=identity.account_id, subject=str(row.id),
                                data={"name": name, "expires_in_days": expires_in_days})
        return await self._view(row.id), value

    async def _view(self, key_id: UUID) -> dict[str, Any]:
        row = await ApiKey.select(*_VIEW_COLUMNS).where(ApiKey.id == key_id).first()
        return public_view(row)

    async def list_for(self, account_id: UUID) -> list[dict[str, Any]]:
        rows = await ApiKey.select(*_VIEW_COLUMNS).where(
            ApiKey.account_id == account_id).order_by(ApiKey.created_at)
        return [public_view(row) for row in rows]

    async def revoke(self, identity: Identity, key_id: str, *, as_admin: bool = False) -> dict[str, Any]:
        """Revoke a key: its owner, or an administrator through the admin path."""
        kid = parse_id(key_id, "key")
        row = await ApiKey.select(ApiKey.id, ApiKey.account_id).where(ApiKey.id == kid).first()
        if row is None or not (row["account_id"] == identity.account_id
                               or (as_admin and identity.is_admin)):
            raise NotFound("No such key.")
        await ApiKey.update({ApiKey.revoked_at: dt.datetime.now(dt.UTC)}).where(
            (ApiKey.id == kid) & ApiKey.revoked_at.is_null())
        await self.audit.record("api_key.revoked", actor=identity.account_id, subject=str(kid),
                                data={"owner": str(row["account_id"])})
        return await self._view(kid)

    async def identify(self, value: str) -> Identity | None:
        """The user a key acts as, or None: unknown, revoked, expired, or user deactivated."""
        if not value.startswith(KEY_PREFIX):
            return None
        row = await ApiKey.select(
            ApiKey.id, ApiKey.account_id.id, ApiKey.account_id.email, ApiKey.account_id.role,
            ApiKey.account_id.permissions,
        ).where(
            (ApiKey.fingerprint == fingerprint(value))
            & ApiKey.revoked_at.is_null()
            & (ApiKey.expires_at.is_null() | (ApiKey.expires_at > dt.datetime.now(dt.UTC)))
            & ApiKey.account_id.deactivated_at.is_null()
        ).first()
        if row is None:
            return None
        return Identity(row["account_id.id"], row["account_id.email"], row["account_id.role"],
                        frozenset(row["account_id.permissions"] or ()), api_key_id=row["id"])

    async def consume(self, key_id: UUID, limit: int) -> ratelimit.RateDecision:
        """Count one request against the key's current window, or refuse it."""
        now = time.time()
        window = dt.datetime.fromtimestamp(ratelimit.window_start(now), dt.UTC)
        async with db.connection() as connection:
            used = await connection.fetchval(_CONSUME, key_id, window, limit)
        return ratelimit.decide(used, limit, now)

