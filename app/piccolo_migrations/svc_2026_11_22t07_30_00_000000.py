"""API keys for /v1: fingerprint only, with the per-key request counter."""

from app.migration_sql import ACCOUNT_ID, CREATED_AT, UUID_KEY, sql_migration

ID = "2026-11-22T07:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "api keys"

STATEMENTS = [
    f"""
    CREATE TABLE api_key (
        {UUID_KEY},
        {ACCOUNT_ID},
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        prefix text NOT NULL,
        fingerprint text NOT NULL UNIQUE,
        {CREATED_AT},
        expires_at timestamptz,
        last_used_at timestamptz,
        revoked_at timestamptz,
        rate_window timestamptz,
        rate_used integer NOT NULL DEFAULT 0
    )
    """,
    "CREATE INDEX api_key_account ON api_key (account_id, created_at)",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
