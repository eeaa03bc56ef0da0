"""Telephone lines, the call log, tickets, the call counters, and per-account feature flags.

Every limit lives here so it holds across server processes (DESIGN.md "Scale-out"):
``telephony_ring`` counts rings per caller, the call log counts calls per line and
calls in progress, ``telephony_signature_failure`` counts failed carrier signatures
per address, and ``telephony_ticket`` holds the single-use tickets.
"""

from app.migration_sql import ACCOUNT_ID, CREATED_AT, UPDATED_AT, UUID_KEY, sql_migration

ID = "2026-11-22T08:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "telephone lines and call log"

_OUTCOMES = ("'completed', 'carrier_ended', 'dropped', 'no_media', 'line_full', "
             "'transferred', 'notice_failed', 'in_progress'")

STATEMENTS = [
    f"""
    CREATE TABLE feature_override (
        {UUID_KEY},
        {ACCOUNT_ID},
        key text NOT NULL CHECK (key LIKE 'features.%'),
        value boolean NOT NULL,
        {UPDATED_AT},
        updated_by uuid,
        UNIQUE (account_id, key)
    )
    """,
    # spec: telephony.md "Line (registered number)". Agent and account references are
    # kept when either goes (SET NULL): the line then refuses calls (agent_unavailable,
    # owner_unavailable) until an administrator rebinds it.
    f"""
    CREATE TABLE telephony_line (
        {UUID_KEY},
        e164 text NOT NULL UNIQUE CHECK (e164 ~ '^\\+[1-9][0-9]{{6,14}}$'),
        agent_id uuid REFERENCES agent (id) ON DELETE SET NULL,
        owner_user_id uuid REFERENCES account (id) ON DELETE SET NULL,
        provider text NOT NULL DEFAULT 'carrier' CHECK (provider IN ('carrier', 'pbx')),
        label text,
        greeting text,
        notice text CHECK (length(notice) <= 600),
        transcript_days integer NOT NULL DEFAULT 0 CHECK (transcript_days BETWEEN 0 AND 3650),
        log_days integer NOT NULL DEFAULT 0 CHECK (log_days BETWEEN 0 AND 3650),
        record_calls boolean NOT NULL DEFAULT false,
        recording_days integer NOT NULL DEFAULT 0 CHECK (recording_days BETWEEN 0 AND 3650),
        enabled boolean NOT NULL DEFAULT false,
        deliver_group_chat_id uuid REFERENCES chat (id) ON DELETE SET NULL,
        transfer_e164 text CHECK (transfer_e164 ~ '^\\+[1-9][0-9]{{6,14}}$'),
        {CREATED_AT},
        {UPDATED_AT},
        CHECK (NOT record_calls OR recording_days > 0)
    )
    """,
    # spec: telephony.md "Call (log entry)". number_id and e164 are plain copies, not a
    # reference: a released line's calls stay in the log under the number they came
    # in on ("Removed for good; its calls stay in the log").
    f"""
    CREATE TABLE telephony_call (
        {UUID_KEY},
        number_id uuid,
        e164 text NOT NULL,
        from_number text NOT NULL,
        provider text NOT NULL CHECK (provider IN ('carrier', 'pbx')),
        carrier_call_sid text UNIQUE,
        carrier_status text,
        owner_id uuid REFERENCES account (id) ON DELETE SET NULL,
        agent_id uuid REFERENCES agent (id) ON DELETE SET NULL,
        chat_id uuid REFERENCES chat (id) ON DELETE SET NULL,
        outcome text NOT NULL DEFAULT 'in_progress' CHECK (outcome IN ({_OUTCOMES})),
        transfer_approved boolean NOT NULL DEFAULT false,
        recording_failed boolean NOT NULL DEFAULT false,
        tidied_at timestamptz,
        started_at timestamptz NOT NULL DEFAULT now(),
        media_started_at timestamptz,
        ended_at timestamptz
    )
    """,
    "CREATE INDEX telephony_call_started ON telephony_call (started_at DESC, id DESC)",
    "CREATE INDEX telephony_call_number ON telephony_call (number_id, started_at DESC)",
    "CREATE INDEX telephony_call_in_progress ON telephony_call (started_at) "
    "WHERE outcome = 'in_progress'",
    # spec: telephony.md "Pbx ticket" — lives 30 seconds, redeemed once.
    """
    CREATE TABLE telephony_ticket (
        token text PRIMARY KEY,
        call_id uuid NOT NULL REFERENCES telephony_call (id) ON DELETE CASCADE,
        issued_at timestamptz NOT NULL DEFAULT now(),
        redeemed_at timestamptz
    )
    """,
    "CREATE INDEX telephony_ticket_issued ON telephony_ticket (issued_at)",
    "CREATE INDEX telephony_ticket_call ON telephony_ticket (call_id)",
    # spec: telephony.md "Limits" — "Calls from one number: 5 in 5 minutes".
    """
    CREATE TABLE telephony_ring (
        id bigserial PRIMARY KEY,
        from_number text NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX telephony_ring_from ON telephony_ring (from_number, at)",
    "CREATE INDEX telephony_ring_at ON telephony_ring (at)",
    # spec: telephony.md "Limits" — "Signature failures from one address: 30 a minute".
    """
    CREATE TABLE telephony_signature_failure (
        id bigserial PRIMARY KEY,
        address text NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX telephony_signature_failure_address ON telephony_signature_failure "
    "(address, at)",
    "CREATE INDEX telephony_signature_failure_at ON telephony_signature_failure (at)",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
