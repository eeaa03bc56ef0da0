"""Outward notifications: targets, the outbox, and every attempt to post.

spec: telephony.md "Notification target", "Outward notifications". Deciding and
posting are separate: the event's own transaction writes ``notify_outbox`` rows, and
the worker (``app.notify.worker``) claims them with ``FOR UPDATE SKIP LOCKED``, so
several server processes on one database never post one row at the same time. Each
row keeps one ``idempotency_key`` over all its retries; ``notify_attempt`` records
every attempt, the live tests of a target included.
"""

from app.migration_sql import ACCOUNT_ID, CREATED_AT, UPDATED_AT, UUID_KEY, sql_migration

ID = "2026-11-23T03:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "notification targets, outbox and attempts"

_EVENTS = "'message_taken', 'appointment_booked', 'appointment_moved', 'appointment_cancelled'"

STATEMENTS = [
    # The url is sealed (app.crypto, purpose "notify_target.url") and never returned;
    # ``host`` is what a saved target shows of it.
    f"""
    CREATE TABLE notify_target (
        {UUID_KEY},
        {ACCOUNT_ID},
        kind text NOT NULL CHECK (kind IN ('chat_a', 'chat_b', 'webhook')),
        label text CHECK (length(label) <= 200),
        url_enc text NOT NULL,
        host text NOT NULL,
        secret_enc text,
        events text[] NOT NULL DEFAULT ARRAY[{_EVENTS}]::text[]
            CHECK (events <@ ARRAY[{_EVENTS}]::text[]),
        enabled boolean NOT NULL DEFAULT true,
        {CREATED_AT},
        {UPDATED_AT}
    )
    """,
    "CREATE INDEX notify_target_account ON notify_target (account_id)",
    # status: pending (to post, at next_attempt_at), delivered, failed (no attempt
    # left, or an answer that will not change), suppressed (notifications were off).
    # claimed_until is the lease of the worker posting it now.
    f"""
    CREATE TABLE notify_outbox (
        {UUID_KEY},
        target_id uuid NOT NULL REFERENCES notify_target (id) ON DELETE CASCADE,
        {ACCOUNT_ID},
        event text NOT NULL CHECK (event IN ({_EVENTS})),
        text text NOT NULL CHECK (length(text) BETWEEN 1 AND 300),
        subject_id uuid,
        idempotency_key text NOT NULL UNIQUE DEFAULT gen_random_uuid()::text,
        status text NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'delivered', 'failed', 'suppressed')),
        attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        claimed_until timestamptz,
        last_error text,
        {CREATED_AT},
        finished_at timestamptz
    )
    """,
    "CREATE INDEX notify_outbox_due ON notify_outbox (next_attempt_at) "
    "WHERE status = 'pending'",
    "CREATE INDEX notify_outbox_target ON notify_outbox (target_id, created_at DESC)",
    # One row per attempt: in_flight while posting (left so when the process died),
    # then delivered, failed, refused (by the egress gate) or interrupted.
    """
    CREATE TABLE notify_attempt (
        id bigserial PRIMARY KEY,
        target_id uuid NOT NULL REFERENCES notify_target (id) ON DELETE CASCADE,
        outbox_id uuid REFERENCES notify_outbox (id) ON DELETE CASCADE,
        number integer NOT NULL CHECK (number >= 1),
        result text NOT NULL DEFAULT 'in_flight'
            CHECK (result IN ('in_flight', 'delivered', 'failed', 'refused', 'interrupted')),
        status_code integer,
        detail text,
        started_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
    )
    """,
    "CREATE INDEX notify_attempt_outbox ON notify_attempt (outbox_id, number)",
    "CREATE INDEX notify_attempt_target ON notify_attempt (target_id, started_at DESC)",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
