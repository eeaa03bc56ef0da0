"""Counted audit entries, and HTTP tools offered to users, projects or everyone.

**Counted entries.** A refusal anyone on the network can provoke (a carrier webhook
with a bad signature, a question to the telephone system's endpoints from the wrong
place) is recorded once per source, reason and window, with ``occurrences`` raised on each
repeat (``app.services.audit.AuditLog.tally``): a flood grows a number, not the table.
``tally_key`` names the source, reason and window; it is unique, so two processes
raising the same entry at once meet in one row. The trail stays append-only: the only
change the database allows is a raise of ``occurrences``, every other column unchanged.

**Tool offers.** An administrator offers an HTTP tool to an account, to a project's
members, or to everyone (both ids null); only a tool offered to someone can be
attached by them to an agent. So that no running agent changes, every HTTP tool an
agent already names is offered here to that agent's owner.
"""

from app.migration_sql import UUID_KEY, sql_migration

ID = "2026-11-25T10:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "counted audit entries and tool offers"

STATEMENTS = [
    """
    ALTER TABLE audit_entry
    ADD COLUMN occurrences integer NOT NULL DEFAULT 1 CHECK (occurrences >= 1)
    """,
    "ALTER TABLE audit_entry ADD COLUMN tally_key text",
    "CREATE UNIQUE INDEX audit_entry_tally_key ON audit_entry (tally_key)",
    """
    CREATE OR REPLACE FUNCTION audit_entry_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND NEW.occurrences > OLD.occurrences
           AND (NEW.id, NEW.kind, NEW.actor_id, NEW.subject, NEW.data, NEW.at, NEW.tally_key)
               IS NOT DISTINCT FROM
               (OLD.id, OLD.kind, OLD.actor_id, OLD.subject, OLD.data, OLD.at, OLD.tally_key)
        THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'audit entries are append-only';
    END
    $$
    """,
    f"""
    CREATE TABLE http_tool_offer (
        {UUID_KEY},
        tool_id uuid NOT NULL REFERENCES http_tool (id) ON DELETE CASCADE,
        account_id uuid REFERENCES account (id) ON DELETE CASCADE,
        project_id uuid REFERENCES project (id) ON DELETE CASCADE,
        offered_by uuid REFERENCES account (id) ON DELETE SET NULL,
        offered_at timestamptz NOT NULL DEFAULT now(),
        CHECK (account_id IS NULL OR project_id IS NULL),
        UNIQUE NULLS NOT DISTINCT (tool_id, account_id, project_id)
    )
    """,
    "CREATE INDEX http_tool_offer_account ON http_tool_offer (account_id)",
    "CREATE INDEX http_tool_offer_project ON http_tool_offer (project_id)",
    """
    INSERT INTO http_tool_offer (tool_id, account_id)
    SELECT DISTINCT t.id, a.owner_id FROM agent a JOIN http_tool t ON t.name = ANY (a.tools)
    ON CONFLICT DO NOTHING
    """,
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
