"""Scheduled runs claimed: each slot of a scheduled job runs in one process only.

A process whose scheduler fires inserts (job, slot) first; the one whose insert
lands runs the job, every other process (worker or host) skips that slot.
"""

from app.migration_sql import sql_migration

ID = "2026-11-25T19:35:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "scheduled runs claimed once per slot"

STATEMENTS = [
    """CREATE TABLE scheduled_run (
        job text NOT NULL,
        slot date NOT NULL,
        ran_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (job, slot))""",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
