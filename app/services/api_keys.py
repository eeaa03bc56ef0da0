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
(``core.ratelimit`` "Leases"), so its row does not serialise every request, and the
next few are claimed in the background before those run out. The clock is
``ApiKeys.clock`` (epoch seconds), so tests can hold time still.
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
        #: the lease claimed ahead for a key, spent once the current one runs out
        #: (None: a claim ahead was refused; none more until the current one is spent)
        self._ahead: dict[UUID, ratelimit.Lease | None] = {}
        #: the claim in progress for a key, with the step of the limit it was made under
        self._claiming: dict[UUID, tuple[int, asyncio.Task[int | None]]] = {}
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

    def _now(self) -> int:
        """The clock in whole microseconds, as the limit's arithmetic counts."""
        return round(self.clock() * 1_000_000)

    async def consume(self, key_id: UUID, limit: int) -> ratelimit.RateDecision:
        """Admit one request of the key, or refuse it: from this process's lease when
        it holds a permit, else from the permits the key's claim in progress brings.

        One claim at a time per key, in a task of its own that every request needing
        permits meanwhile awaits: they all wake together when it ends (a lock would
        hand the claimed permits over one waiter per turn of the event loop, tens of
        milliseconds for a burst of 64 on a busy core), and a refused claim refuses
        them all. A busy key's next lease is claimed ahead, once half of its current
        one is spent (``ratelimit.claim_ahead``)."""
        now = self._now()
        while True:
            tat = self._spend(key_id, limit, now)
            if tat is not None:
                self._claim_ahead_when_due(key_id, limit)
                return ratelimit.admitted(tat, now, limit)
            claiming = self._claim_in_progress(key_id, limit)
            if claiming is None:
                claiming = self._start_claim(key_id, limit, now)
            # Shielded: a request that goes away leaves the claim to the others.
            refused_at = await asyncio.shield(claiming)
            if refused_at is not None:
                # Judged at the refusal, not the arrival: requests admitted meanwhile
                # (by another process, at a later instant) would otherwise stretch the
                # wait past the interval by however long this one queued.
                return ratelimit.refused(refused_at, self._now(), limit)

    def _spend(self, key_id: UUID, limit: int, now: int) -> int | None:
        step = ratelimit.interval(limit)
        lease = self._leases.get(key_id)
        if lease is not None and lease.step == step:  # else the limit changed: judge afresh
            tat = lease.spend(now)
            if tat is not None:
                return tat
        ahead = self._ahead.pop(key_id, None)
        if ahead is None or ahead.step != step:
            return None
        self._leases[key_id] = ahead
        return ahead.spend(now)

    def _claim_in_progress(self, key_id: UUID, limit: int) -> asyncio.Task[int | None] | None:
        """The key's claim still in progress under this limit, if any. One that has
        ended but is not yet let go of brought nothing left for the request asking
        (awaiting it again would return at once, for ever); one made under another
        limit would give its refusal to a request the new limit may admit."""
        in_progress = self._claiming.get(key_id)
        if in_progress is None:
            return None
        step, claim = in_progress
        return None if claim.done() or step != ratelimit.interval(limit) else claim

    def _start_claim(self, key_id: UUID, limit: int, now: int) -> asyncio.Task[int | None]:
        claim = asyncio.get_running_loop().create_task(self._claim(key_id, limit, now))
        self._claiming[key_id] = (ratelimit.interval(limit), claim)

        def ended(_: asyncio.Task[int | None]) -> None:
            if self._claiming.get(key_id, (0, None))[1] is claim:
                del self._claiming[key_id]
            if not claim.cancelled():
                claim.exception()  # a claim ahead nobody awaited: its failure is met again

        claim.add_done_callback(ended)
        return claim

    async def _claim(self, key_id: UUID, limit: int, now: int) -> int | None:
        """Claim the key's next lease: None once it is held, else the key's TAT that
        refuses (no permit left this minute, or the key revoked meanwhile)."""
        step = ratelimit.interval(limit)
        async with db.fast_connection() as connection:
            claimed = await connection.fetchrow(_CLAIM, key_id, now, limit, step,
                                                ratelimit.lease_size(limit))
        if claimed is None:  # revoked meanwhile
            return now + limit * step
        if not claimed["granted"]:
            self._ahead[key_id] = None  # no claim ahead until the current lease is spent
            return claimed["tat"]
        if len(self._leases) > 10_000:  # mostly lapsed leases
            self._leases.clear()
            self._ahead.clear()
        lease = ratelimit.Lease(claimed["tat_after"], claimed["granted"],
                                now + ratelimit.LEASE_MICROS, step)
        current = self._leases.get(key_id)
        if current is not None and current.usable(self._now()):
            self._ahead[key_id] = lease  # claimed ahead: spent once the current one is
        else:
            self._leases[key_id] = lease
        return None

    def _claim_ahead_when_due(self, key_id: UUID, limit: int) -> None:
        if (key_id not in self._claiming and key_id not in self._ahead
                and ratelimit.claim_ahead(self._leases[key_id], ratelimit.lease_size(limit))):
            self._start_claim(key_id, limit, self._now())
