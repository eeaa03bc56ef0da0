"""Usage by line, and the timings of each answered telephone turn.

``usage_event.line_id`` says which line a telephone turn's model call served (null for
the app and the API), so the dashboard can total each line. ``telephony_turn`` keeps,
per answered turn of a call, how long after the end of the caller's speech the agent
was asked, wrote its first words, sent its first audio and finished speaking.
"""

from app.migration_sql import sql_migration

ID = "2026-11-25T21:50:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "usage by line; telephone turn timings"

STATEMENTS = [
    "ALTER TABLE usage_event ADD COLUMN line_id uuid",
    """CREATE TABLE telephony_turn (
        id bigserial PRIMARY KEY,
        call_id uuid NOT NULL REFERENCES telephony_call (id) ON DELETE CASCADE,
        at timestamptz NOT NULL DEFAULT now(),
        asked_ms integer NOT NULL CHECK (asked_ms >= 0),
        first_text_ms integer CHECK (first_text_ms >= 0),
        first_audio_ms integer CHECK (first_audio_ms >= 0),
        finished_ms integer NOT NULL CHECK (finished_ms >= 0))""",
    "CREATE INDEX telephony_turn_call ON telephony_turn (call_id, id)",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
