"""Accounts, sessions, sign-in failures, runtime settings and the audit trail."""

from app.migration_sql import ACCOUNT_ID, CREATED_AT, UPDATED_AT, UUID_KEY, sql_migration

ID = "2026-11-22T06:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "foundation"

STATEMENTS = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE EXTENSION IF NOT EXISTS btree_gist",
    f"""
    CREATE TABLE account (
        {UUID_KEY},
        email text NOT NULL,
        password_hash text NOT NULL,
        role text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin', 'superadmin')),
        permissions text[] NOT NULL DEFAULT '{{}}',
        deactivated_at timestamptz,
        {CREATED_AT},
        CONSTRAINT account_email_key UNIQUE (email),
        CONSTRAINT account_email_lower CHECK (email = lower(email))
    )
    """,
    f"""
    CREATE TABLE auth_session (
        {UUID_KEY},
        token_sha256 text NOT NULL UNIQUE,
        {ACCOUNT_ID},
        {CREATED_AT},
        expires_at timestamptz NOT NULL
    )
    """,
    "CREATE INDEX auth_session_account ON auth_session (account_id)",
    """
    CREATE TABLE login_failure (
        id bigserial PRIMARY KEY,
        email text NOT NULL,
        address text NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX login_failure_email_at ON login_failure (email, at)",
    "CREATE INDEX login_failure_address_at ON login_failure (address, at)",
    f"""
    CREATE TABLE runtime_setting (
        key text PRIMARY KEY,
        value jsonb,
        {UPDATED_AT},
        updated_by uuid
    )
    """,
    """
    CREATE TABLE audit_entry (
        id bigserial PRIMARY KEY,
        kind text NOT NULL,
        actor_id uuid,
        subject text,
        data jsonb NOT NULL DEFAULT '{}',
        at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX audit_entry_at ON audit_entry (at)",
    "CREATE INDEX audit_entry_kind_at ON audit_entry (kind, at)",
    # The audit trail is append-only: the database itself refuses to change history.
    """
    CREATE FUNCTION audit_entry_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'audit entries are append-only';
    END
    $$
    """,
    """
    CREATE TRIGGER audit_entry_append_only BEFORE UPDATE OR DELETE ON audit_entry
    FOR EACH ROW EXECUTE FUNCTION audit_entry_append_only()
    """,
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
