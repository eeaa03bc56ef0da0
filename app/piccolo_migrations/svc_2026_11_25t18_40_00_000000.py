"""An account whose password must be changed before anything else: the first
superadmin, whose one-time password was printed to the terminal at start."""

from app.migration_sql import sql_migration

ID = "2026-11-25T18:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "password change required before anything else"

STATEMENTS = [
    "ALTER TABLE account ADD COLUMN password_change_required boolean NOT NULL DEFAULT false",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
