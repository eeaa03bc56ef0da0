"""Invitations to a project, accepted by the account invited.

``project_invitation`` keeps one invitation per project and email, whether or not an
account has the email; the account with it becomes a member when it accepts. Adding
someone no longer makes them a member at once, so nobody is put in a project without
agreeing, and a project's owner cannot tell from its members which emails have
accounts here.
"""

from app.migration_sql import CREATED_AT, UUID_KEY, sql_migration

ID = "2026-11-27T01:10:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "invitations to a project"

INVITATIONS = f"""CREATE TABLE project_invitation (
        {UUID_KEY},
        project_id uuid NOT NULL REFERENCES project (id) ON DELETE CASCADE,
        email text NOT NULL,
        invited_by uuid NOT NULL REFERENCES account (id) ON DELETE CASCADE,
        {CREATED_AT},
        UNIQUE (project_id, email))"""

# An account's pending invitations are found by its email, across projects.
BY_EMAIL = "CREATE INDEX project_invitation_email ON project_invitation (email)"

STATEMENTS = [INVITATIONS, BY_EMAIL]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
