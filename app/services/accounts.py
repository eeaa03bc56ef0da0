"""Accounts: who they are, their role and grants, signing in, and the first superadmin.

Passwords are hashed with argon2id in a worker thread (hashing is deliberately slow and
must not stall the event loop). Sign-in failures are counted in the database so the
slow-down holds across server processes, and each attempt is reserved there before its
password is checked (``app.services.sign_in_attempts``). Failed and slowed-down
attempts are tallied in the audit trail by address and account, never with the email
typed when no account has it: that field sometimes holds a password.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from typing import Any, Iterable
from uuid import UUID

import anyio.to_thread
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from app.errors import Conflict, TooManyRequests, Unauthorized, Unprocessable
from app.services.audit import MANY_SOURCES, AuditLog
from app.services.auth_changes import AuthChanges
from app.services import sign_in_attempts
from app.services.rows import find_by_id
from app.tables import Account
from core.records import frozen

ROLES = ("user", "admin", "superadmin")
PERMISSIONS = ("telephony.manage", "voice.manage", "config.manage")
MIN_PASSWORD_LENGTH = 10
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
# argon2id with OWASP's recommended parameters (19 MiB, 2 passes, 1 lane): about 50 ms
# on a small server, which bounds guessing without making sign-in sluggish.
_HASHER = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
# Verifying against this when the account does not exist keeps the time of a wrong
# address equal to that of a wrong password.
_DUMMY_HASH = _HASHER.hash(secrets.token_hex(16))


@frozen
class Identity:
    """Who is calling: an account, through a session or an API key."""

    account_id: UUID
    email: str
    role: str
    permissions: frozenset[str]
    api_key_id: UUID | None = None
    password_change_required: bool = False

    @property
    def is_admin(self) -> bool:
        return self.role in ("admin", "superadmin")

    @property
    def is_superadmin(self) -> bool:
        return self.role == "superadmin"

    def has(self, permission: str) -> bool:
        return self.is_admin or permission in self.permissions

    @classmethod
    def from_row(cls, row: dict[str, Any], api_key_id: UUID | None = None) -> "Identity":
        return cls(row["id"], row["email"], row["role"], frozenset(row["permissions"] or ()),
                   api_key_id)


def public_view(row: dict[str, Any]) -> dict[str, Any]:
    """An account as the API shows it: never the password hash."""
    return {
        "id": str(row["id"]),
        "email": row["email"],
        "role": row["role"],
        "permissions": sorted(row["permissions"] or ()),
        "deactivated": row["deactivated_at"] is not None,
        "created_at": row["created_at"].isoformat(),
    }


def normalise_email(email: str) -> str:
    email = email.strip().lower()
    if not _EMAIL.match(email) or len(email) > 320:
        raise Unprocessable("Give a valid email address.", field="email")
    return email


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise Unprocessable(f"A password needs at least {MIN_PASSWORD_LENGTH} characters.",
                            field="password", code="password_too_short")


def check_grants(role: str, permissions: Iterable[str]) -> list[str]:
    if role not in ROLES:
        raise Unprocessable(f"role must be one of {', '.join(ROLES)}.", field="role")
    unknown = sorted(set(permissions) - set(PERMISSIONS))
    if unknown:
        raise Unprocessable(f"Unknown permission {unknown[0]!r}.", field="permissions")
    return sorted(set(permissions))


async def hash_password(password: str) -> str:
    return await anyio.to_thread.run_sync(_HASHER.hash, password)


async def password_matches(stored_hash: str, password: str) -> bool:
    """Whether ``password`` is the one ``stored_hash`` was made from; a hash that cannot
    be read matches nothing. Every password check of the service goes through here."""

    def verify() -> bool:
        try:
            return _HASHER.verify(stored_hash, password)
        except (VerificationError, InvalidHashError):
            return False

    return await anyio.to_thread.run_sync(verify)


class Accounts:
    def __init__(self, audit: AuditLog, changes: AuthChanges) -> None:
        self.audit = audit
        self.changes = changes

    async def find(self, account_id: UUID | str) -> dict[str, Any]:
        return await find_by_id(Account, account_id, "account")

    async def list(self) -> list[dict[str, Any]]:
        return await Account.select().order_by(Account.created_at)

    async def create(self, email: str, password: str, role: str = "user",
                     permissions: Iterable[str] = (), actor: UUID | None = None, *,
                     one_time_password: bool = False) -> dict[str, Any]:
        email = normalise_email(email)
        check_password(password)
        grants = check_grants(role, permissions)
        if await Account.exists().where(Account.email == email):
            raise Conflict("An account with this email exists.", code="email_taken", field="email")
        row = Account(email=email, password_hash=await hash_password(password), role=role,
                      permissions=grants, password_change_required=one_time_password)
        await row.save()
        await self.audit.record("account.created", actor=actor, subject=str(row.id),
                                data={"role": role, "permissions": grants})
        return await self.find(row.id)

    async def update(self, account_id: UUID | str, *, actor: UUID, role: str | None = None,
                     permissions: Iterable[str] | None = None,
                     deactivated: bool | None = None) -> dict[str, Any]:
        row = await self.find(account_id)
        changes: dict[str, Any] = {}
        if role is not None or permissions is not None:
            new_role = role if role is not None else row["role"]
            grants = check_grants(new_role, permissions if permissions is not None
                                  else row["permissions"])
            changes.update({Account.role: new_role, Account.permissions: grants})
        if deactivated is not None:
            changes[Account.deactivated_at] = dt.datetime.now(dt.UTC) if deactivated else None
        if changes:
            # A role or a deactivation holds for the account's API keys on their
            # next request to any process (app.services.auth_changes).
            async with self.changes.change():
                await Account.update(changes).where(Account.id == row["id"])
                await self.audit.record(
                    "account.changed", actor=actor, subject=str(row["id"]),
                    data={str(k._meta.name): (v.isoformat() if isinstance(v, dt.datetime)
                                              else v) for k, v in changes.items()})
        return await self.find(row["id"])

    async def set_password(self, account_id: UUID, password: str) -> None:
        check_password(password)
        await Account.update({Account.password_hash: await hash_password(password),
                              Account.password_change_required: False}).where(
            Account.id == account_id)
        await self.audit.record("account.password_changed", actor=account_id,
                                subject=str(account_id))

    async def verify_password(self, account_id: UUID, password: str) -> bool:
        row = await Account.select(Account.password_hash).where(Account.id == account_id).first()
        return row is not None and await password_matches(row["password_hash"], password)

    async def authenticate(self, email: str, password: str, address: str) -> dict[str, Any]:
        """The account for these credentials, or 401 without saying which part was wrong."""
        email = email.strip().lower()
        if "\x00" in email:
            # No stored address holds NUL (nor can PostgreSQL compare one): the sign-in
            # form's fields are not checked like a JSON body's.
            raise Unauthorized("Wrong email or password.", code="invalid_credentials")
        try:
            await sign_in_attempts.reserve(email, address)
        except TooManyRequests:
            found = await Account.select(Account.id).where(Account.email == email).first()
            await self._tally_sign_in("account.sign_in_slowed", found, address)
            raise
        row = await Account.select().where(Account.email == email).first()
        valid = await password_matches(row["password_hash"] if row else _DUMMY_HASH, password)
        if not valid or row is None or row["deactivated_at"] is not None:
            await self._tally_sign_in("account.sign_in_failed", row, address)
            raise Unauthorized("Wrong email or password.", code="invalid_credentials")
        await sign_in_attempts.succeeded(email)
        return row

    async def _tally_sign_in(self, kind: str, account: dict[str, Any] | None,
                             address: str) -> None:
        # One entry per kind, address and account in each tally window, however many
        # guesses: a stranger's attempts cannot flood the trail.
        subject = str(account["id"]) if account else None
        await self.audit.tally(kind, f"{address} {subject or 'unknown'}", subject=subject,
                               data={"address": address}, many=MANY_SOURCES)

    async def ensure_first_superadmin(self, email: str = "admin@localhost") -> str | None:
        """Create a superadmin when there is none; return its one-time password, which
        was printed to a terminal and so must be changed before anything else."""
        if await Account.exists().where(Account.role == "superadmin"):
            return None
        password = secrets.token_urlsafe(15)
        await self.create(email, password, role="superadmin", one_time_password=True)
        return password
