"""The diary, its closures and appointments, the screening list, and enquiries.

Two callers can never take one slot: ``appointment`` carries an exclusion constraint
on the time range of every live (booked or moved) appointment of an account, so the
database refuses the second of two overlapping bookings however they interleave.
Appointments and enquiries outlive their call (``call_id`` is set null when the call
goes; spec: telephony.md "Retention periods").
"""

from app.migration_sql import ACCOUNT_ID, CREATED_AT, UPDATED_AT, UUID_KEY, sql_migration

ID = "2026-11-23T02:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "diary, appointments, screening list, enquiries"

STATEMENTS = [
    # spec: telephony.md "Diary (per account)". The ranges are core.diary's; hours are
    # validated by core.diary.parse_diary and replaced wholesale on each write.
    f"""
    CREATE TABLE diary (
        {UUID_KEY},
        account_id uuid NOT NULL UNIQUE REFERENCES account (id) ON DELETE CASCADE,
        timezone text NOT NULL,
        slot_minutes integer NOT NULL CHECK (slot_minutes BETWEEN 5 AND 480),
        lead_minutes integer NOT NULL CHECK (lead_minutes BETWEEN 0 AND 10080),
        horizon_days integer NOT NULL CHECK (horizon_days BETWEEN 1 AND 365),
        enabled boolean NOT NULL DEFAULT false,
        hours jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(hours) = 'array'),
        {UPDATED_AT}
    )
    """,
    f"""
    CREATE TABLE diary_closure (
        {UUID_KEY},
        {ACCOUNT_ID},
        closed_on date NOT NULL,
        note text CHECK (length(note) <= 500),
        {CREATED_AT},
        UNIQUE (account_id, closed_on)
    )
    """,
    # spec: "Appointment" — state booked, moved or cancelled; "two callers cannot take
    # one slot". caller_number is the number it was booked from (null when booked
    # through the API or the caller withheld it), for the change-by-telephone rule.
    f"""
    CREATE TABLE appointment (
        {UUID_KEY},
        {ACCOUNT_ID},
        reference text NOT NULL,
        starts_at timestamptz NOT NULL,
        ends_at timestamptz NOT NULL,
        caller_name text NOT NULL CHECK (length(caller_name) BETWEEN 1 AND 200),
        subject text NOT NULL CHECK (length(subject) BETWEEN 1 AND 500),
        contact text CHECK (length(contact) <= 200),
        caller_number text,
        state text NOT NULL DEFAULT 'booked' CHECK (state IN ('booked', 'moved', 'cancelled')),
        call_id uuid REFERENCES telephony_call (id) ON DELETE SET NULL,
        {CREATED_AT},
        {UPDATED_AT},
        cancelled_at timestamptz,
        CHECK (ends_at > starts_at),
        UNIQUE (account_id, reference),
        CONSTRAINT appointment_slot_free EXCLUDE USING gist (
            account_id WITH =, tstzrange(starts_at, ends_at, '[)') WITH &&
        ) WHERE (state <> 'cancelled')
    )
    """,
    "CREATE INDEX appointment_account_start ON appointment (account_id, starts_at)",
    "CREATE INDEX appointment_call ON appointment (call_id)",
    # spec: "Screening list" — at most 200 characters a name; one row per normal form.
    f"""
    CREATE TABLE screening_name (
        {UUID_KEY},
        {ACCOUNT_ID},
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        normal_form text NOT NULL CHECK (normal_form <> ''),
        note text CHECK (length(note) <= 500),
        {CREATED_AT},
        UNIQUE (account_id, normal_form)
    )
    """,
    # A message taken on a call: who rang, what about, the message and the call.
    f"""
    CREATE TABLE enquiry (
        {UUID_KEY},
        {ACCOUNT_ID},
        call_id uuid REFERENCES telephony_call (id) ON DELETE SET NULL,
        caller_number text NOT NULL DEFAULT '',
        caller_name text CHECK (length(caller_name) <= 200),
        subject text NOT NULL CHECK (length(subject) BETWEEN 1 AND 500),
        message text NOT NULL CHECK (length(message) BETWEEN 1 AND 4000),
        status text NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'in_hand', 'done')),
        note text CHECK (length(note) <= 2000),
        {CREATED_AT},
        {UPDATED_AT}
    )
    """,
    "CREATE INDEX enquiry_account ON enquiry (account_id, created_at DESC)",
    "CREATE INDEX enquiry_call ON enquiry (call_id)",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
