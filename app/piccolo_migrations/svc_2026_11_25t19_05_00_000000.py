"""The per-key limit without window edges (``core.ratelimit``: GCRA).

A key's limit state becomes one instant, its theoretical arrival time, in
microseconds since the epoch; the per-minute counter and its window go.
"""

from app.migration_sql import sql_migration

ID = "2026-11-25T19:05:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "per-key limit as a theoretical arrival time"

STATEMENTS = [
    "ALTER TABLE api_key ADD COLUMN rate_tat bigint",
    "ALTER TABLE api_key DROP COLUMN rate_window, DROP COLUMN rate_used",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
