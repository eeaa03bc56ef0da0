"""API keys: minted by a user in their profile, shown once, stored as a fingerprint.

A key acts as the user who minted it (same role, same reach); there are no scopes.
Lookup is by SHA-256 fingerprint through a unique index, so timing does not depend on
the secret. Each process keeps the identities it looked up (``IdentityCache``) while
PostgreSQL's change notices reach it, so a busy key costs no lookup per request;
revocation and expiry still take effect on the very next request in every process
(``app.services.auth_changes``: a revocation returns once every process has dropped
what it kept, and expiry is checked on every hit). The per-minute limit (GCRA,
``core.ratelimit``) is judged on the key's row by a single atomic statement, so it
holds across server processes; a busy key's permits are claimed a few at a time
(``core.ratelimit`` "Leases"), so its row does not serialise every request. The clock
is ``ApiKeys.clock`` (epoch seconds), so tests can hold time still.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import secrets
import time
from typing import Any
from uuid import UUID

from app.errors import NotFound, Unprocessable
from app.services.access import parse_id
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.services.auth_changes import AuthChanges
from app.services.identity_cache import IdentityCache
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

# A key not kept in this process is looked up by this one statement, by the
# fingerprint's unique index.
_IDENTIFY = """
SELECT k.id, k.expires_at, a.id AS account_id, a.email, a.role, a.permissions
FROM api_key k JOIN account a ON a.id = k.account_id
WHERE k.fingerprint = $1 AND k.revoked_at IS NULL
  AND (k.expires_at IS NULL OR k.expires_at > now()) AND a.deactivated_at IS NULL
"""

# ``core.ratelimit.claim`` as one statement: at $2 (microseconds), take up to $5
# permits for a key limited to $3 a minute, earning one each $4 microseconds. The
# row is locked for the statement, so processes claiming together queue on it. It
# answers the key's TAT before the claim and the permits granted (0: refused, the row
# unchanged); no row when the key was revoked meanwhile.
_CLAIM = """
WITH current AS (
    SELECT id, GREATEST(COALESCE(rate_tat, $2::bigint), $2::bigint) AS base,
           COALESCE(rate_tat, $2::bigint) AS tat
    FROM api_key WHERE id = $1 AND revoked_at IS NULL FOR UPDATE
), judged AS (
    SELECT id, base, tat, LEAST($5::bigint, GREATEST(0::bigint,
           ($2::bigint + $3::bigint * $4::bigint - base) / $4::bigint)) AS granted
    FROM current
), moved AS (
    UPDATE api_key SET rate_tat = judged.base + judged.granted * $4::bigint,
                       last_used_at = now()
    FROM judged WHERE api_key.id = judged.id AND judged.granted >= 1
)
SELECT tat, base + granted * $4::bigint AS tat_after, granted FROM judged
"""


class ApiKeys:
    def __init__(self, audit: AuditLog, changes: AuthChanges) -> None:
        self.audit = audit
        self.changes = changes
        self._known: IdentityCache[Identity] = changes.cache
        self._leases: dict[UUID, ratelimit.Lease] = {}
        self._claiming: dict[UUID, asyncio.Lock] = {}
        self.clock = time.time

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
        async with self.changes.change():
            await ApiKey.update({ApiKey.revoked_at: dt.datetime.now(dt.UTC)}).where(
                (ApiKey.id == kid) & ApiKey.revoked_at.is_null())
            await self.audit.record("api_key.revoked", actor=identity.account_id,
                                    subject=str(kid), data={"owner": str(row["account_id"])})
        return await self._view(kid)

    async def identify(self, value: str) -> Identity | None:
        """The user a key acts as, or None: unknown, revoked, expired, or user deactivated."""
        if not value.startswith(KEY_PREFIX):
            return None
        key = fingerprint(value)
        known = self._known.get(key)
        if known is not None:
            return known
        generation = self._known.generation
        async with db.fast_connection() as connection:
            row = await connection.fetchrow(_IDENTIFY, key)
        if row is None:
            return None
        identity = Identity(row["account_id"], row["email"], row["role"],
                            frozenset(row["permissions"] or ()), api_key_id=row["id"])
        self._known.put(key, identity, row["expires_at"], generation)
        return identity

    async def consume(self, key_id: UUID, limit: int) -> ratelimit.RateDecision:
        """Admit one request of the key, or refuse it: from this process's lease when
        it holds a permit, else by claiming more. Claims for one key are made one at a
        time, so requests arriving together spend the permits one claim brought
        instead of each claiming their own."""
        now = round(self.clock() * 1_000_000)
        tat = self._spend(key_id, limit, now)
        if tat is None:
            async with self._claiming.setdefault(key_id, asyncio.Lock()):
                tat = self._spend(key_id, limit, now)  # another claim may have refilled it
                if tat is None:
                    return await self._claim(key_id, limit, now)
        return ratelimit.admitted(tat, now, limit)

    def _spend(self, key_id: UUID, limit: int, now: int) -> int | None:
        lease = self._leases.get(key_id)
        if lease is None or lease.step != ratelimit.interval(limit):
            return None  # the limit changed since the claim: judge afresh
        return lease.spend(now)

    async def _claim(self, key_id: UUID, limit: int, now: int) -> ratelimit.RateDecision:
        step = ratelimit.interval(limit)
        async with db.fast_connection() as connection:
            claimed = await connection.fetchrow(_CLAIM, key_id, now, limit, step,
                                                ratelimit.lease_size(limit))
        if claimed is None:  # revoked meanwhile
            return ratelimit.refused(now + limit * step, now, limit)
        if not claimed["granted"]:
            return ratelimit.refused(claimed["tat"], now, limit)
        if len(self._leases) > 10_000:  # mostly lapsed leases
            self._leases.clear()
            self._claiming = {kid: lock for kid, lock in self._claiming.items() if lock.locked()}
        lease = ratelimit.Lease(claimed["tat_after"], claimed["granted"],
                                now + ratelimit.LEASE_MICROS, step)
        self._leases[key_id] = lease
        tat = lease.spend(now)
        assert tat is not None
        return ratelimit.admitted(tat, now, limit)
