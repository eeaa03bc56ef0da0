"""Conversations in text with a line: an operator tries the line's agent without a phone.

Each holds what a call's ``CallContext`` carries from turn to turn (refused change
attempts, the screening verdict) and how it ended; the transcript is a chat of the
line's account. ``busy_until`` lets one turn run at a time across every process; a
process that stopped mid-turn frees it when the time passes.
"""

from app.migration_sql import CREATED_AT, UPDATED_AT, UUID_KEY, sql_migration

ID = "2026-11-25T21:55:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "conversations in text with a line"

STATEMENTS = [
    f"""CREATE TABLE line_conversation (
        {UUID_KEY},
        line_id uuid NOT NULL REFERENCES telephony_line (id) ON DELETE CASCADE,
        chat_id uuid NOT NULL REFERENCES chat (id) ON DELETE CASCADE,
        operator_id uuid NOT NULL REFERENCES account (id) ON DELETE CASCADE,
        change_attempts integer NOT NULL DEFAULT 0,
        caller_verdict text CHECK (caller_verdict IN ('clear', 'match')),
        ended text CHECK (ended IN ('completed', 'transferred')),
        busy_until timestamptz,
        {CREATED_AT},
        {UPDATED_AT})""",
    "CREATE INDEX line_conversation_line ON line_conversation (line_id)",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
