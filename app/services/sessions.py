"""Signed-in sessions: opaque tokens, of which only the SHA-256 is stored.

Every request looks its session up together with the account, so a deactivated
account or a revoked session stops working on the very next request.
"""

from __future__ import annotations

__all__ = ["Sessions", "COOKIE_NAME", "fingerprint", "Account"]

import datetime as dt
import hashlib
import secrets
from uuid import UUID

from app.services.accounts import Identity
from app.tables import Account, AuthSession

SESSION_DAYS = 14
COOKIE_NAME = "svc_session"


def fingerprint(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Sessions:
    async def open(self, account_id: UUID) -> tuple[str, dt.datetime]:
        token = secrets.token_urlsafe(32)
        expires = dt.datetime.now(dt.UTC) + dt.timedelta(days=SESSION_DAYS)
        await AuthSession.insert(AuthSession(token_sha256=fingerprint(token),
                                             account_id=account_id, expires_at=expires))
        return token, expires

    async def identify(self, token: str) -> Identity | None:
        row = await AuthSession.select(
            AuthSession.account_id.id, AuthSession.account_id.email,
            AuthSession.account_id.role, AuthSession.account_id.permissions,
            AuthSession.account_id.password_change_required,
        ).where(
            (AuthSession.token_sha256 == fingerprint(token))
            & (AuthSession.expires_at > dt.datetime.now(dt.UTC))
            & AuthSession.account_id.deactivated_at.is_null()
        ).first()
        if row is None:
            return None
        return Identity(row["account_id.id"], row["account_id.email"], row["account_id.role"],
                        frozenset(row["account_id.permissions"] or ()),
                        password_change_required=row["account_id.password_change_required"])

    async def close(self, token: str) -> None:
        await AuthSession.delete().where(AuthSession.token_sha256 == fingerprint(token))

    async def close_all(self, account_id: UUID) -> None:
        await AuthSession.delete().where(AuthSession.account_id == account_id)

    async def close_others(self, account_id: UUID, keep_token: str) -> None:
        """Every session of the account but ``keep_token``'s (after a password change:
        whoever else held the old password is signed out)."""
        await AuthSession.delete().where(
            (AuthSession.account_id == account_id)
            & (AuthSession.token_sha256 != fingerprint(keep_token)))
