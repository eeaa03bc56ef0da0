"""Accounts, sessions, sign-in failures, runtime settings and the audit trail.

Names are singular; every primary key is a UUID except append-only logs, which count
with a bigserial.
"""

from __future__ import annotations

from piccolo.columns import (JSONB, UUID, Array, BigSerial, Boolean, ForeignKey, Integer,
                             OnDelete, Text, Timestamptz)
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from app.tables.mixins import Created


class Account(Created, Table, tablename="account"):
    """A person who signs in. ``role`` is user, admin or superadmin; ``permissions``
    holds grants such as telephony.manage (administrators hold all of them).
    ``password_change_required``: the password was one-time (the first superadmin's);
    nothing but changing it is allowed until it is changed."""

    id = UUID(primary_key=True)
    email = Text(unique=True)
    password_hash = Text()
    role = Text(default="user")
    permissions = Array(base_column=Text())
    deactivated_at = Timestamptz(null=True, default=None)
    password_change_required = Boolean(default=False)


class AccountOwned:
    """Mixin for a row of one account's, keyed by a UUID: it goes when the account goes."""

    id = UUID(primary_key=True)
    account_id = ForeignKey(references=Account, on_delete=OnDelete.cascade)


class AuthSession(Created, Table, tablename="auth_session"):
    """A signed-in session. Only the SHA-256 of the token is kept."""

    id = UUID(primary_key=True)
    token_sha256 = Text(unique=True)
    account_id = ForeignKey(references=Account)
    expires_at = Timestamptz()


class LoginFailure(Table, tablename="login_failure"):
    """One failed sign-in, kept briefly to slow down guessing per account and address."""

    id = BigSerial(primary_key=True)
    email = Text()
    address = Text()
    at = Timestamptz(default=TimestamptzNow())


class RuntimeSetting(Table, tablename="runtime_setting"):
    """A runtime override of a setting declared in ``core.settings``. ``value`` is JSON;
    a JSON null is a deliberate null (for settings that follow another)."""

    key = Text(primary_key=True)
    value = JSONB(null=True)
    updated_at = Timestamptz(default=TimestamptzNow())
    updated_by = UUID(null=True, default=None)


class AuditEntry(Table, tablename="audit_entry"):
    """Append-only audit trail (the database refuses UPDATE and DELETE on it, but for
    raising ``occurrences`` of a counted entry: one per ``tally_key``, see ``AuditLog.tally``)."""

    id = BigSerial(primary_key=True)
    kind = Text()
    actor_id = UUID(null=True, default=None)
    subject = Text(null=True, default=None)
    data = JSONB(default="{}")
    at = Timestamptz(default=TimestamptzNow())
    occurrences = Integer(default=1)
    tally_key = Text(null=True, default=None, unique=True)
