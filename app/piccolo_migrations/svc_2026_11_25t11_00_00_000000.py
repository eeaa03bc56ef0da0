"""Call leases, and the retention periods a call was recorded under.

``telephony_lease``: each server process holds one row while it runs and renews its
``expires_at`` every few seconds (``app.telephony.leases``). A call whose audio runs in
a process names that process in ``owner_instance``; when the owner's lease is gone or
has lapsed (the process was killed, or lost its database), the call is ended
``dropped`` by whichever process sweeps next, so it stops counting against the limits.
No foreign key: the lease row goes while the calls naming it stay in the log.

``transcript_days``, ``log_days``, ``recording_days`` on a call: the line's periods
when the call started, so that the calls of a released line are still swept by them
(spec: telephony.md "Retention periods"). Calls already in the log take their line's
periods now; those of lines released before this migration keep nothing to go by and
are kept, as before.
"""

from app.migration_sql import sql_migration

ID = "2026-11-25T11:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "call leases and per-call retention periods"

STATEMENTS = [
    """
    CREATE TABLE telephony_lease (
        instance_id uuid PRIMARY KEY,
        process_id integer NOT NULL,
        host text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
    )
    """,
    "ALTER TABLE telephony_call ADD COLUMN owner_instance uuid",
    """
    ALTER TABLE telephony_call
        ADD COLUMN transcript_days integer NOT NULL DEFAULT 0
            CHECK (transcript_days BETWEEN 0 AND 3650),
        ADD COLUMN log_days integer NOT NULL DEFAULT 0 CHECK (log_days BETWEEN 0 AND 3650),
        ADD COLUMN recording_days integer NOT NULL DEFAULT 0
            CHECK (recording_days BETWEEN 0 AND 3650)
    """,
    """
    UPDATE telephony_call c
    SET transcript_days = l.transcript_days, log_days = l.log_days,
        recording_days = l.recording_days
    FROM telephony_line l WHERE l.id = c.number_id
    """,
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
