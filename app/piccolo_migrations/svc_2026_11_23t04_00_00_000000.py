"""Change notices for API keys and accounts (``app.services.auth_changes``).

Each server process keeps the identities behind the API keys it has seen; these
triggers tell every process, as the change commits, that something such an identity
depends on changed: a key's fingerprint, owner, revocation or expiry, an account's
email, role, grants or deactivation, or a deletion. Columns that change on every
request (a key's counter, ``last_used_at``) send nothing. The payload is the change's
token (``svc.auth_change``), empty when the change set none.
"""

from app.migration_sql import sql_migration

ID = "2026-11-23T04:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "change notices for API keys and accounts"

STATEMENTS = [
    """
    CREATE FUNCTION auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('svc_auth_changed',
                          coalesce(current_setting('svc.auth_change', true), ''));
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER api_key_auth_changed
    AFTER UPDATE OF fingerprint, account_id, revoked_at, expires_at OR DELETE OR TRUNCATE
    ON api_key FOR EACH STATEMENT EXECUTE FUNCTION auth_changed()
    """,
    """
    CREATE TRIGGER account_auth_changed
    AFTER UPDATE OF email, role, permissions, deactivated_at OR DELETE OR TRUNCATE
    ON account FOR EACH STATEMENT EXECUTE FUNCTION auth_changed()
    """,
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
